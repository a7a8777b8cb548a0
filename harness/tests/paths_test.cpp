// End-to-end runs of the paths beyond a plain run: compare of two pins, --shard,
// compare of merged shard runs (the CI verdict), scav@REV built from a commit of
// a scratch clone, and harness plot. Each fixture runs the harness once and
// several tests read what it wrote, so CTest runs this binary as one test.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "inputs/plan.h"
#include "test_util.h"

namespace mh {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> column(const Json& runs, const char* field) {
  std::vector<std::string> out;
  for (const auto& r : runs) out.push_back(r[field]);
  return out;
}

std::vector<std::string> quick_suite() {
  std::string error;
  auto s = load_suite(std::string(MEMHARNESS_SOURCE_DIR_FOR_TESTS) + "/workloads/suites.json", "quick", error);
  EXPECT_TRUE(s) << error;
  std::vector<std::string> names;
  for (const auto& e : s.value_or(std::vector<SuiteEntry>{})) names.push_back(e.name.empty() ? e.workload : e.name);
  return names;
}

// What compare's exit code must be for the comparison it wrote.
int verdict_exit(const Json& comparison) {
  return comparison["regression"].get<bool>() || comparison["failed_runs"].get<int>() > 0 ? 1 : 0;
}

void expect_exit_two_naming(const std::vector<std::string>& args, const std::string& value) {
  auto c = test::run_harness(args);
  EXPECT_EQ(c.exit_code, 2) << c.out << c.err;
  EXPECT_NE(c.err.find(value), std::string::npos) << "missing " << value << " in: " << c.err;
}

// ---------------------------------------------------------------------------
// compare --baseline glibc --candidate jemalloc on burst-writefile --smoke,
// twice with the same seed (the second time with --report).

class ComparePins : public ::testing::Test {
 protected:
  static constexpr uint64_t kSeed = 20240611;
  static std::vector<std::string> command(const std::string& out) {
    return {"compare",  "--baseline", "glibc", "--candidate", "jemalloc", "--workload", "burst-writefile", "--smoke",
            "--runs",   "2",          "--seed", std::to_string(kSeed),     "--quiet",    "-o",              out};
  }
  static void SetUpTestSuite() {
    out_ = test::scratch("pins.json");
    md_ = test::scratch("pins.md");
    runs_ = out_.substr(0, out_.size() - 5) + "-runs.json";  // the default beside the comparison
    auto args = command(out_);
    args.insert(args.end(), {"--markdown", md_});
    first_ = test::run_harness(args);
    again_out_ = test::scratch("pins-again.json");
    again_runs_ = test::scratch("pins-again-report.json");
    args = command(again_out_);
    args.insert(args.end(), {"--report", again_runs_});
    again_ = test::run_harness(args);
  }
  static inline std::string out_, md_, runs_, again_out_, again_runs_;
  static inline Captured first_, again_;
};

TEST_F(ComparePins, ExitCodeIsTheVerdict) {
  ASSERT_TRUE(fs::exists(out_)) << first_.out << first_.err;
  Json j = test::load_json(out_);
  EXPECT_EQ(j["failed_runs"], 0);
  EXPECT_EQ(first_.exit_code, verdict_exit(j)) << first_.err;
  EXPECT_NE(first_.out.find("candidate jemalloc against baseline glibc, 2 rounds"), std::string::npos) << first_.out;
  EXPECT_NE(first_.out.find("comparison: " + out_), std::string::npos);
  EXPECT_NE(first_.out.find("fewer than 5"), std::string::npos) << "2 rounds must warn";
}

TEST_F(ComparePins, ComparisonNamesThePinsRoundsAndSeed) {
  Json j = test::load_json(out_);
  EXPECT_EQ(j["schema"], "memharness.comparison/1");
  EXPECT_EQ(j["baseline"]["name"], "glibc");
  EXPECT_EQ(j["candidate"]["name"], "jemalloc");
  EXPECT_EQ(j["rounds"], 2);
  EXPECT_EQ(j["context"]["plan"]["shuffle_seed"], kSeed);
  EXPECT_EQ(j["context"]["plan"]["rounds"], 2);
  EXPECT_EQ(j["context"]["runs_report"], runs_);
  ASSERT_EQ(j["workloads"].size(), 1u);
  EXPECT_EQ(j["workloads"][0]["workload"], "burst-writefile");
  EXPECT_EQ(j["workloads"][0]["params"]["smoke"], true);
}

TEST_F(ComparePins, EveryMetricHasAVerdictOverBothSides) {
  const std::set<std::string> verdicts = {"no change", "regression", "improvement", "noisy", "changed"};
  std::set<std::string> names;
  const Json comparison = test::load_json(out_);
  for (const auto& m : comparison["workloads"][0]["metrics"]) {
    names.insert(m["metric"]);
    EXPECT_TRUE(verdicts.count(m["verdict"])) << m["metric"] << ": " << m["verdict"];
    EXPECT_EQ(m["baseline"]["n"], 4) << m["metric"];  // A and A' together
    EXPECT_EQ(m["candidate"]["n"], 2) << m["metric"];
    EXPECT_EQ(m["baseline_again"]["n"], 2) << m["metric"];
  }
  for (const char* m : {"peak_rss_kb", "final_rss_kb", "minflt", "workload.burst_ms"})
    EXPECT_TRUE(names.count(m)) << m;
}

TEST_F(ComparePins, RunsReportHasEveryRoleTwice) {
  ASSERT_TRUE(fs::exists(runs_));
  Json runs = test::load_json(runs_)["runs"];
  ASSERT_EQ(runs.size(), 6u);
  std::map<std::string, std::vector<int>> repetitions;
  for (const auto& r : runs) {
    repetitions[r["role"]].push_back(r["repetition"]);
    EXPECT_EQ(r["allocator"]["name"], r["role"] == "candidate" ? "jemalloc" : "glibc");
    EXPECT_EQ(r["status"], "ok") << r["exit"].dump();
    EXPECT_EQ(r["allocator"]["verified"], true);
  }
  const std::vector<int> both = {1, 2};
  EXPECT_EQ(repetitions["baseline"], both);
  EXPECT_EQ(repetitions["candidate"], both);
  EXPECT_EQ(repetitions["baseline-again"], both);
}

TEST_F(ComparePins, TheSeedFixesTheRunOrder) {
  // The order the seed gives: arms 0, 1, 2 are baseline, candidate, baseline again.
  const char* roles[] = {"baseline", "candidate", "baseline-again"};
  std::vector<std::string> planned;
  for (const auto& p : interleave(1, 3, 2, kSeed)) planned.push_back(roles[p.arm]);
  ASSERT_NE(planned, (std::vector<std::string>{roles[0], roles[1], roles[2], roles[0], roles[1], roles[2]}))
      << "pick a seed that shuffles, or this test cannot tell";
  EXPECT_EQ(column(test::load_json(runs_)["runs"], "role"), planned);

  EXPECT_EQ(again_.exit_code, verdict_exit(test::load_json(again_out_))) << again_.err;
  ASSERT_TRUE(fs::exists(again_runs_)) << "--report " << again_runs_ << ": " << again_.err;
  EXPECT_EQ(column(test::load_json(again_runs_)["runs"], "role"), planned);
  EXPECT_EQ(test::load_json(again_out_)["context"]["runs_report"], again_runs_);
}

TEST_F(ComparePins, MarkdownIsWritten) {
  std::string md = test::slurp(md_);
  EXPECT_NE(md.find("### memharness: "), std::string::npos) << md;
  EXPECT_NE(md.find("candidate jemalloc against baseline glibc, 2 rounds"), std::string::npos);
  EXPECT_NE(md.find("| final_rss_kb (MB) |"), std::string::npos);
  EXPECT_NE(md.find("**burst-writefile**"), std::string::npos);
}

// harness plot, on the files the comparison wrote.

void expect_png(const std::string& path, const Captured& c) {
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  std::string png = test::slurp(path);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << path;
  EXPECT_GT(png.size(), 10000u) << path << " is too small to hold a figure";
}

TEST_F(ComparePins, PlotOfTheRunsReport) {
  std::string png = test::scratch("pins-rss.png");
  expect_png(png, test::run_harness({"plot", runs_, "-o", png}));
}

TEST_F(ComparePins, PlotOfTheComparison) {
  std::string png = test::scratch("pins-compare.png");
  expect_png(png, test::run_harness({"plot", "--compare", out_, "-o", png}));
}

TEST(Plot, MissingInputIsExitTwo) {
  std::string missing = test::scratch("no-such-report.json");
  expect_exit_two_naming({"plot", missing, "-o", test::scratch("x.png")}, missing);
  expect_exit_two_naming({"plot", "--compare", missing, "-o", test::scratch("y.png")}, missing);
}

// ---------------------------------------------------------------------------
// --shard I/N of the quick suite under glibc, one round: both shards together
// run the suite once.

class QuickShards : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (int i = 0; i < 2; ++i) {
      path_[i] = test::scratch("shard-" + std::to_string(i + 1) + ".json");
      result_[i] = test::run_harness({"--suite", "quick", "--shard", std::to_string(i + 1) + "/2", "-a", "glibc",
                                      "--runs", "1", "--quiet", "-o", path_[i]});
    }
  }
  static inline std::string path_[2];
  static inline Captured result_[2];
};

TEST_F(QuickShards, EachShardRunsEverySecondEntry) {
  auto suite = quick_suite();
  ASSERT_GT(suite.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(result_[i].exit_code, 0) << result_[i].out << result_[i].err;
    Json report = test::load_json(path_[i]);
    std::vector<std::string> expected;
    for (size_t k = size_t(i); k < suite.size(); k += 2) expected.push_back(suite[k]);
    EXPECT_EQ(column(report["runs"], "workload"), expected) << "shard " << i + 1 << "/2";
    EXPECT_EQ(report["context"]["plan"]["shard"], std::to_string(i + 1) + "/2");
    for (const auto& r : report["runs"]) EXPECT_EQ(r["status"], "ok") << r["workload"] << ": " << r["exit"].dump();
  }
}

TEST_F(QuickShards, TogetherTheyRunTheSuiteOnce) {
  std::multiset<std::string> ran;
  for (const auto& path : path_)
    for (const auto& w : column(test::load_json(path)["runs"], "workload")) ran.insert(w);
  auto suite = quick_suite();
  EXPECT_EQ(ran, std::multiset<std::string>(suite.begin(), suite.end()));
}

TEST(Shard, BadShardIsExitTwoNamingIt) {
  for (const char* bad : {"0/2", "3/2", "x", "1/0", "2"}) {
    SCOPED_TRACE(bad);
    expect_exit_two_naming({"--suite", "quick", "--shard", bad, "-a", "glibc"}, std::string("'") + bad + "'");
  }
  expect_exit_two_naming({"compare", "--baseline", "glibc", "--candidate", "jemalloc", "--suite", "quick", "--shard", "3/2"},
                         "'3/2'");
}

// ---------------------------------------------------------------------------
// The CI verdict: compare one shard per job, merge the runs reports, compare the
// merged runs: both shards of two, the path ci/github-workflow.yml takes with two
// shards (a merge refuses a plan's shards that are not all there).

class MergedShards : public ::testing::Test {
 protected:
  static constexpr int kShards = 2;
  static void SetUpTestSuite() {
    for (int i = 0; i < 2; ++i) {
      std::string tag = std::to_string(i + 1) + "-of-" + std::to_string(kShards);
      shard_cmp_[i] = test::scratch("cmp-" + tag + ".json");
      shard_runs_[i] = test::scratch("runs-" + tag + ".json");
      shard_[i] = test::run_harness({"compare", "--baseline", "glibc", "--candidate", "jemalloc", "--suite", "quick",
                                     "--shard", std::to_string(i + 1) + "/" + std::to_string(kShards), "--runs", "1",
                                     "--quiet", "--report", shard_runs_[i], "-o", shard_cmp_[i]});
    }
    merged_ = test::scratch("merged-runs.json");
    merge_ = test::run_harness({"merge", shard_runs_[0], shard_runs_[1], "-o", merged_});
    verdict_ = test::scratch("verdict.json");
    verdict_md_ = test::scratch("verdict.md");
    compare_ = test::run_harness({"compare", merged_, "-o", verdict_, "--markdown", verdict_md_});
  }
  static inline std::string shard_cmp_[2], shard_runs_[2], merged_, verdict_, verdict_md_;
  static inline Captured shard_[2], merge_, compare_;
};

TEST_F(MergedShards, ShardsWriteTheirRunsAndTheMergeJoinsThem) {
  size_t total = 0;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(fs::exists(shard_runs_[i])) << shard_[i].err;
    EXPECT_EQ(shard_[i].exit_code, verdict_exit(test::load_json(shard_cmp_[i]))) << shard_[i].err;
    total += test::load_json(shard_runs_[i])["runs"].size();
  }
  EXPECT_EQ(merge_.exit_code, 0) << merge_.err;
  EXPECT_NE(merge_.out.find("merged " + std::to_string(total) + " runs from 2 reports"), std::string::npos) << merge_.out;
}

TEST_F(MergedShards, VerdictCoversTheWorkloadsOfBothShards) {
  ASSERT_TRUE(fs::exists(verdict_)) << compare_.out << compare_.err;
  Json v = test::load_json(verdict_);
  EXPECT_EQ(compare_.exit_code, verdict_exit(v)) << compare_.err;
  EXPECT_EQ(v["baseline"]["name"], "glibc");
  EXPECT_EQ(v["candidate"]["name"], "jemalloc");
  EXPECT_EQ(v["rounds"], 1);
  EXPECT_EQ(v["failed_runs"], 0);
  EXPECT_EQ(v["context"]["inputs"], Json::array({merged_}));

  auto suite = quick_suite();
  std::vector<std::string> expected;
  for (int i = 0; i < 2; ++i)
    for (size_t k = size_t(i); k < suite.size(); k += kShards) expected.push_back(suite[k]);
  std::vector<std::string> got = column(v["workloads"], "workload");
  std::sort(expected.begin(), expected.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(got.size(), suite.size());
  for (const auto& w : expected) EXPECT_NE(test::slurp(verdict_md_).find("**" + w + "**"), std::string::npos) << w;
}

TEST_F(MergedShards, MergingLosesNothing) {
  // Each workload's metrics in the merged verdict are those of its own shard's comparison.
  std::map<std::string, Json> by_workload;
  for (const auto& path : shard_cmp_) {
    const Json shard = test::load_json(path);
    for (const auto& w : shard["workloads"]) by_workload[w["workload"]] = w["metrics"];
  }
  const Json verdict = test::load_json(verdict_);
  int whole = 0;  // entries compared whole
  for (const auto& w : verdict["workloads"]) {
    SCOPED_TRACE(w["workload"].get<std::string>());
    const Json& shard = by_workload[w["workload"]];
    ASSERT_EQ(w["metrics"].size(), shard.size());
    for (size_t k = 0; k < shard.size(); ++k) {
      const Json &merged = w["metrics"][k], &own = shard[k];
      SCOPED_TRACE(own["metric"].get<std::string>());
      EXPECT_EQ(merged["metric"], own["metric"]);
      // The runs report keeps wall_ms to 0.01 ms; the shard's own comparison
      // had the values before rounding. Otherwise the same runs give the same entry.
      bool same_values = true;
      for (const char* side : {"baseline", "candidate", "baseline_again"}) {
        const Json &a = merged[side]["values"], &b = own[side]["values"];
        ASSERT_EQ(a.size(), b.size()) << side;
        for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i].get<double>(), b[i].get<double>(), 0.0051) << side;
        same_values = same_values && a == b;
      }
      if (same_values) {
        EXPECT_EQ(merged, own);
        ++whole;
      }
    }
  }
  EXPECT_GT(whole, 20);
}

// ---------------------------------------------------------------------------
// scav@REV from a commit that exists only in a scratch clone of this source
// tree, found through MEMHARNESS_SOURCE_DIR.

std::string git(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/git", "-c", "user.name=memharness test", "-c",
                                   "user.email=test@memharness.invalid"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto c = run_capture(argv);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  return c.out.substr(0, c.out.find('\n'));
}

class ScavAtRevision : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    clone_ = test::scratch("clone");
    fs::remove_all(clone_);
    git({"clone", "--quiet", MEMHARNESS_SOURCE_DIR_FOR_TESTS, clone_});
    git({"-C", clone_, "commit", "--quiet", "--allow-empty", "-m", "A commit only this clone has"});
    sha_ = git({"-C", clone_, "rev-parse", "HEAD"});
    report_ = test::scratch("scav-rev.json");
    setenv("MEMHARNESS_SOURCE_DIR", clone_.c_str(), 1);
    run_ = test::run_harness({"--workload", "burst-writefile", "--smoke", "-a", "scav@" + sha_, "--runs", "1",
                              "--quiet", "-o", report_});
    unknown_ = test::run_harness({"--workload", "burst-writefile", "--smoke", "-a", "scav@no-such-rev", "-q"});
    unsetenv("MEMHARNESS_SOURCE_DIR");
    elsewhere_ = test::run_harness({"--workload", "burst-writefile", "--smoke", "-a", "scav@" + sha_, "-q"});
  }
  static void TearDownTestSuite() { fs::remove_all(clone_); }
  static inline std::string clone_, sha_, report_;
  static inline Captured run_, unknown_, elsewhere_;
};

TEST_F(ScavAtRevision, BuildsAndRunsVerified) {
  ASSERT_EQ(sha_.size(), 40u);
  EXPECT_EQ(run_.exit_code, 0) << run_.out << run_.err;
  EXPECT_NE(run_.err.find("building scav at " + sha_.substr(0, 12)), std::string::npos) << run_.err;
  ASSERT_TRUE(fs::exists(report_));
  Json runs = test::load_json(report_)["runs"];
  ASSERT_EQ(runs.size(), 1u);
  const Json& r = runs[0];
  EXPECT_EQ(r["status"], "ok") << r["exit"].dump() << r["output_tail"];
  EXPECT_EQ(r["allocator"]["name"], "scav@" + sha_);
  EXPECT_EQ(r["allocator"]["verified"], true);
  EXPECT_EQ(r["allocator"]["identified"], "scav");
}

TEST_F(ScavAtRevision, LibraryIsInTheClonesBuildCache) {
  ASSERT_TRUE(fs::exists(report_)) << run_.err;
  std::string lib = test::load_json(report_)["runs"][0]["allocator"]["library"];
  std::string cache = clone_ + "/build/pins/scav-" + sha_.substr(0, 12) + "-";
  EXPECT_EQ(lib.rfind(cache, 0), 0u) << lib << " is not under " << cache;
  EXPECT_TRUE(fs::exists(lib)) << lib;
  std::string served_by = test::load_json(report_)["runs"][0]["allocator"]["served_by"];
  EXPECT_NE(served_by.find(cache), std::string::npos) << served_by;
}

TEST_F(ScavAtRevision, UnknownRevisionIsExitTwoNamingIt) {
  EXPECT_EQ(unknown_.exit_code, 2) << unknown_.err;
  EXPECT_NE(unknown_.err.find("'no-such-rev'"), std::string::npos) << unknown_.err;
  EXPECT_NE(unknown_.err.find(clone_), std::string::npos) << "the message names the repository: " << unknown_.err;
}

TEST_F(ScavAtRevision, WithoutTheVariableTheCommitIsNotFound) {
  // The commit is only in the clone: the tree the harness was built from does not have it.
  EXPECT_EQ(elsewhere_.exit_code, 2) << elsewhere_.err;
  EXPECT_NE(elsewhere_.err.find("'" + sha_ + "'"), std::string::npos) << elsewhere_.err;
}

}  // namespace
}  // namespace mh
