// Real runs through the harness binary: burst-writefile --smoke under glibc and
// jemalloc, checked field by field; and a crashing workload that must not cost
// the other runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <set>
#include <vector>

#include "sys/procfs.h"
#include "test_util.h"

namespace mh {
namespace {

class BurstSmoke : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new std::string(test::scratch("burst-smoke.json"));
    result_ = new Captured(test::run_harness({"--workload", "burst-writefile", "--smoke", "--allocator", "glibc",
                                              "--allocator", "jemalloc", "--runs", "2", "--quiet", "--out", *path_}));
  }
  static void TearDownTestSuite() {
    delete path_;
    delete result_;
  }
  static Json report() { return test::load_json(*path_); }
  static std::string* path_;
  static Captured* result_;
};
std::string* BurstSmoke::path_ = nullptr;
Captured* BurstSmoke::result_ = nullptr;

TEST_F(BurstSmoke, ExitsZeroAndPrintsTheTable) {
  EXPECT_EQ(result_->exit_code, 0) << result_->err;
  EXPECT_NE(result_->out.find("peak RSS MB"), std::string::npos) << result_->out;
  EXPECT_NE(result_->out.find("jemalloc"), std::string::npos);
  EXPECT_NE(result_->out.find("report: " + *path_), std::string::npos);
}

TEST_F(BurstSmoke, ContextSaysWhereAndHow) {
  Json c = report()["context"];
  EXPECT_EQ(report()["schema"], "memharness.report/1");
  EXPECT_EQ(c["cpus"], sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_FALSE(c["kernel"].get<std::string>().empty());
  EXPECT_FALSE(c["thp"].get<std::string>().empty());
  // This machine's own answer (procfs_test tests the reading on a fake /sys).
  EXPECT_EQ(c["free_page_reporting"], procfs::free_page_reporting());
  EXPECT_NE(c["command"].get<std::string>().find("--workload burst-writefile --smoke"), std::string::npos);
  EXPECT_FALSE(c["git_revision"].get<std::string>().empty());
}

TEST_F(BurstSmoke, RunsAreInterleavedOkAndVerified) {
  Json runs = report()["runs"];
  ASSERT_EQ(runs.size(), 4u);
  const char* order[] = {"glibc", "jemalloc", "glibc", "jemalloc"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(runs[i]["allocator"]["name"], order[i]);
    EXPECT_EQ(runs[i]["repetition"], int(i / 2 + 1));
    EXPECT_EQ(runs[i]["status"], "ok") << runs[i]["exit"].dump() << runs[i]["output_tail"];
    EXPECT_EQ(runs[i]["allocator"]["verified"], true);
    EXPECT_EQ(runs[i]["allocator"]["identified"], order[i]);
    EXPECT_FALSE(runs[i]["allocator"]["version"].get<std::string>().empty());
    EXPECT_EQ(runs[i]["exit"]["code"], 0);
  }
  EXPECT_NE(runs[1]["allocator"]["served_by"].get<std::string>().find("libjemalloc"), std::string::npos);
}

TEST_F(BurstSmoke, ParamsAreTheResolvedSmokeValues) {
  Json p = report()["runs"][0]["params"];
  EXPECT_EQ(p["smoke"], true);
  EXPECT_EQ(p["calls"], 20);
  EXPECT_EQ(p["size"], 262144);
  EXPECT_EQ(p["threads"], 2);
  EXPECT_EQ(p["release-on-pool"], false);
  EXPECT_EQ(p["input"], "utf16");
}

TEST_F(BurstSmoke, SamplesMarksAndMetricsAgree) {
  for (const auto& run : report()["runs"]) {
    const auto& s = run["samples"];
    size_t n = s["t_ms"].size();
    ASSERT_GT(n, 0u);
    for (const auto& col : s.items()) EXPECT_EQ(col.value().size(), n) << col.key();
    std::vector<std::string> names;
    double last_t = -1;
    for (const auto& m : run["marks"]) {
      names.push_back(m["name"]);
      EXPECT_GT(m["t_ms"].get<double>(), last_t);
      last_t = m["t_ms"];
      EXPECT_GT(m["sample"]["rss_kb"].get<int>(), 0);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"start", "all-started", "all-done", "end"}));
    const auto& m = run["metrics"];
    int64_t peak = m["peak_rss_kb"];
    EXPECT_GE(peak, m["final_rss_kb"].get<int64_t>());
    for (const auto& v : s["rss_kb"]) EXPECT_LE(v.get<int64_t>(), peak);
    ASSERT_TRUE(m["hwm_kb"].is_number());
    EXPECT_LE(peak, m["hwm_kb"].get<double>() * 1.001);  // nothing sampled above the kernel's maximum
    EXPECT_GT(peak, m["hwm_kb"].get<double>() * 0.5);
    EXPECT_GE(m["maxrss_kb"].get<int64_t>(), peak * 99 / 100);
    EXPECT_GT(m["minflt"].get<int64_t>(), 20 * 64);  // 20 copies of 64 pages at least
    EXPECT_GT(m["utime_ms"].get<double>() + m["stime_ms"].get<double>(), 0);
    // The workload's own metrics.
    EXPECT_EQ(m["workload"]["calls"]["value"], 20);
    EXPECT_EQ(m["workload"]["bytes_written"]["value"], 20 * 262144);
    EXPECT_EQ(m["workload"]["files_verified"]["value"], 20);
    EXPECT_GT(m["workload"]["burst_ms"]["value"].get<double>(), 0);
  }
}

TEST_F(BurstSmoke, PerfCountersHaveAValueOrAReason) {
  Json perf = report()["runs"][0]["metrics"]["perf"];
  for (const char* ev : {"task-clock", "page-faults", "minor-faults", "major-faults", "context-switches",
                         "cpu-migrations", "instructions", "cycles"}) {
    ASSERT_TRUE(perf.contains(ev)) << ev;
    if (perf[ev]["value"].is_null()) {
      EXPECT_FALSE(perf[ev]["reason"].get<std::string>().empty()) << ev;
    }
  }
  // Software events work everywhere perf_event_open does.
  if (!perf["page-faults"]["value"].is_null()) {
    EXPECT_GT(perf["page-faults"]["value"].get<double>(), 20 * 64);
  }
}

TEST_F(BurstSmoke, ThreadsAndSampler) {
  Json run = report()["runs"][0];
  std::vector<std::string> names;
  for (const auto& t : run["threads"]) names.push_back(t["name"]);
  EXPECT_NE(std::find(names.begin(), names.end(), "pool-0"), names.end()) << run["threads"].dump();
  EXPECT_NE(std::find(names.begin(), names.end(), "pool-1"), names.end());
  EXPECT_EQ(run["sampler"]["interval_ms"], 10);
  EXPECT_GT(run["sampler"]["samples"].get<int>(), 0);
  EXPECT_GT(run["sampler"]["cost_us_median"].get<double>(), 0);
}

TEST_F(BurstSmoke, SummaryHasOneRowPerAllocator) {
  Json sum = report()["summary"];
  ASSERT_EQ(sum.size(), 2u);
  EXPECT_EQ(sum[0]["allocator"], "glibc");
  EXPECT_EQ(sum[1]["runs_ok"], 2);
  EXPECT_EQ(sum[1]["metrics"]["peak_rss_kb"]["n"], 2);
  EXPECT_EQ(sum[1]["metrics"]["workload.calls"]["median"], 20);
}

TEST(EndToEnd, ACrashedRunIsRecordedAndTheOthersGoOn) {
  setenv("MEMHARNESS_WORKLOAD_DIR", TEST_WORKLOAD_DIR, 1);
  std::string path = test::scratch("crash.json");
  auto c = test::run_harness({"--workload", "misbehave", "--mode", "crash", "-a", "glibc", "-a", "jemalloc", "--runs",
                              "2", "--quiet", "--out", path});
  unsetenv("MEMHARNESS_WORKLOAD_DIR");
  EXPECT_EQ(c.exit_code, 1) << c.err;
  Json runs = test::load_json(path)["runs"];
  ASSERT_EQ(runs.size(), 4u);
  for (const auto& r : runs) {
    EXPECT_EQ(r["status"], "crashed");
    EXPECT_EQ(r["exit"]["signal"], 11);
  }
  EXPECT_NE(c.out.find("crashed"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

// Two small reports made once per test process: glibc, then jemalloc.
struct TwoReports {
  std::string glibc = test::scratch("glibc.json"), jemalloc = test::scratch("jemalloc.json");
  TwoReports() {
    for (auto [a, path] : {std::pair{"glibc", glibc}, std::pair{"jemalloc", jemalloc}}) {
      auto c = test::run_harness({"--workload", "burst-writefile", "--smoke", "-a", a, "--runs", "8", "-q", "-o", path});
      EXPECT_EQ(c.exit_code, 0) << c.err;
    }
  }
};

TEST(CompareReports, JemallocKeepsMoreAtTheEndThanGlibc) {
  TwoReports r;
  std::string out = test::scratch("cmp.json"), md = test::scratch("cmp.md");
  auto c = test::run_harness({"compare", r.glibc, r.jemalloc, "-o", out, "--markdown", md});
  // glibc gives its copies back at once (final RSS ~4 MB), jemalloc keeps its dirty pages (~11 MB).
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  Json j = test::load_json(out);
  EXPECT_EQ(j["schema"], "memharness.comparison/1");
  EXPECT_EQ(j["baseline"]["name"], "glibc");
  EXPECT_EQ(j["candidate"]["name"], "jemalloc");
  EXPECT_EQ(j["regression"], true);
  bool found = false;
  for (const auto& m : j["workloads"][0]["metrics"])
    if (m["metric"] == "final_rss_kb") {
      found = true;
      EXPECT_EQ(m["verdict"], "regression");
      EXPECT_GT(m["change"].get<double>(), 0.5);
      EXPECT_EQ(m["baseline"]["n"], 8);
      EXPECT_FALSE(m["baseline_again"].is_null());  // the even repetitions stand in for A'
    }
  EXPECT_TRUE(found);
  EXPECT_NE(test::slurp(md).find("| final_rss_kb (MB) |"), std::string::npos);
  // Eight runs a report (the README advises at least six; with six a side the
  // smallest Holm-adjusted p of 12 metrics is about 0.05, so a run where the
  // censored times join the family could miss it): the noise floor four
  // against four (the baseline's odd against its even repetitions).
  EXPECT_NE(c.out.find("8 runs a side"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("4 rounds"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("compares 4 runs of the baseline with 4 of the baseline again"), std::string::npos) << c.out;
  EXPECT_EQ(j["sample_size"], "8 runs a side");
}

// --runs auto: five rounds, then more at the look of 8 only while a gated metric
// is unknown; every metric that can regress says what was decided and when.
TEST(CompareAuto, DecidesEveryMetricAndSaysWithHowManyRounds) {
  const std::string out = test::scratch("auto.json");
  auto c = test::run_harness({"compare", "--baseline", "glibc", "--candidate", "jemalloc", "-w", "burst-writefile",
                              "--smoke", "--runs", "auto", "--max-runs", "8", "-q", "-o", out});
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;  // jemalloc keeps its dirty pages at the end
  Json j = test::load_json(out);
  EXPECT_EQ(j["sequential"]["looks"], Json::parse("[5, 8]"));
  EXPECT_DOUBLE_EQ(j["sequential"]["alpha_per_look"].get<double>(), 0.025);
  int most = 0;
  for (const auto& m : j["workloads"][0]["metrics"]) {
    if (m["direction"] == "none") continue;
    const std::string d = m["decision"].get<std::string>();
    EXPECT_TRUE(d == "regression" || d == "improvement" || d == "same" || d == "unknown") << m["metric"] << d;
    const int rounds = m["rounds_needed"].get<int>();
    EXPECT_TRUE(rounds == 5 || rounds == 8) << m["metric"] << rounds;
    if (m["gated"] == true) most = std::max(most, rounds);
    if (m["metric"] == "final_rss_kb") {
      EXPECT_EQ(d, "regression");
    }
  }
  // The comparison ran as many rounds as its slowest gated metric needed: a
  // reported metric never asks for more.
  EXPECT_EQ(j["rounds"], most);
  EXPECT_NE(c.out.find("decision"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("--runs auto: looks at 5, 8 rounds"), std::string::npos) << c.out;
}

TEST(Merge, JoinsRunsAndSummarisesAgain) {
  TwoReports r;
  std::string out = test::scratch("merged.json");
  auto c = test::run_harness({"merge", r.glibc, r.jemalloc, "-o", out});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  Json j = test::load_json(out);
  EXPECT_EQ(j["runs"].size(), 16u);
  ASSERT_EQ(j["summary"].size(), 2u);
  EXPECT_EQ(j["summary"][1]["allocator"], "jemalloc");
  EXPECT_EQ(j["context"]["merged_from"].size(), 2u);
}

// Two reports of several allocators each, as a default run writes them: the
// user picks which allocator of each side to compare.
TEST(CompareReports, AnAllocatorIsChosenFromReportsOfSeveral) {
  std::string a = test::scratch("several-a.json"), b = test::scratch("several-b.json");
  for (const auto& path : {a, b}) {
    auto c = test::run_harness({"-w", "timer-turns", "--smoke", "-a", "glibc", "-a", "jemalloc", "-n", "2", "-q", "-o", path});
    ASSERT_EQ(c.exit_code, 0) << c.err;
  }
  auto unchosen = test::run_harness({"compare", a, b, "-o", test::scratch("unchosen.json")});
  EXPECT_EQ(unchosen.exit_code, 2);
  EXPECT_NE(unchosen.err.find("glibc, jemalloc"), std::string::npos) << unchosen.err;
  EXPECT_NE(unchosen.err.find("--allocator"), std::string::npos) << unchosen.err;

  std::string both = test::scratch("both.json");
  auto same = test::run_harness({"compare", a, b, "--allocator", "jemalloc", "-o", both});
  EXPECT_NE(same.exit_code, 2) << same.err;
  Json j = test::load_json(both);
  EXPECT_EQ(j["baseline"]["name"], "jemalloc");
  EXPECT_EQ(j["candidate"]["name"], "jemalloc");

  std::string each = test::scratch("each.json");
  auto apart = test::run_harness(
      {"compare", a, b, "--baseline-allocator", "glibc", "--candidate-allocator", "jemalloc", "-o", each});
  EXPECT_NE(apart.exit_code, 2) << apart.err;
  j = test::load_json(each);
  EXPECT_EQ(j["baseline"]["name"], "glibc");
  EXPECT_EQ(j["candidate"]["name"], "jemalloc");

  auto absent = test::run_harness({"compare", a, b, "--allocator", "hoard"});
  EXPECT_EQ(absent.exit_code, 2);
  EXPECT_NE(absent.err.find("no runs of allocator 'hoard'; it has: glibc, jemalloc"), std::string::npos) << absent.err;
}

TEST(Merge, RefusesTheSameRunsTwiceAndOtherParameters) {
  std::string a = test::scratch("merge-a.json"), copy = test::scratch("merge-copy.json"),
              other = test::scratch("merge-other.json"), out = test::scratch("merge-out.json");
  auto run = [](std::vector<std::string> args) {
    auto c = test::run_harness(args);
    EXPECT_EQ(c.exit_code, 0) << c.err;
  };
  run({"-w", "timer-turns", "--smoke", "-a", "glibc", "-n", "1", "-q", "-o", a});
  run({"-w", "timer-turns", "--smoke", "--turns", "30", "-a", "jemalloc", "-n", "1", "-q", "-o", other});
  std::filesystem::copy_file(a, copy);

  auto twice = test::run_harness({"merge", a, a, "-o", out});
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("is given twice"), std::string::npos) << twice.err;
  auto copied = test::run_harness({"merge", a, copy, "-o", out});
  EXPECT_EQ(copied.exit_code, 2);
  EXPECT_NE(copied.err.find("both hold repetition 1 of timer-turns under glibc"), std::string::npos) << copied.err;
  auto params = test::run_harness({"merge", a, other, "-o", out});
  EXPECT_EQ(params.exit_code, 2);
  EXPECT_NE(params.err.find("--turns=30"), std::string::npos) << params.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Merge, RefusesShardsThatMissPartOfThePlanAndAPlainReport) {
  std::string one = test::scratch("shard-1.json"), two = test::scratch("shard-2.json"),
              plain = test::scratch("plain.json"), out = test::scratch("shards.json");
  for (auto [shard, path] : {std::pair{"1/8", one}, std::pair{"5/8", two}}) {
    auto c = test::run_harness({"--suite", "quick", "--shard", shard, "-a", "glibc", "-n", "1", "-q", "-o", path});
    ASSERT_EQ(c.exit_code, 0) << c.err;
  }
  auto c = test::run_harness({"-w", "timer-turns", "--smoke", "-a", "glibc", "-n", "1", "-q", "-o", plain});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  // Two shards of eight: the other six are named (all join: test_merge_shards.py, test_slurm.py).
  auto shards = test::run_harness({"merge", one, two, "-o", out});
  EXPECT_EQ(shards.exit_code, 2);
  EXPECT_NE(shards.err.find("shards 2/8, 3/8, 4/8, 6/8"), std::string::npos) << shards.err;
  EXPECT_NE(shards.err.find("8/8 are missing"), std::string::npos) << shards.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  auto mixed = test::run_harness({"merge", one, plain, "-o", out});
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.err.find("another plan"), std::string::npos) << mixed.err;
}

std::vector<std::string> mark_names(const Json& run) {
  std::vector<std::string> names;
  for (const auto& m : run["marks"]) names.push_back(m["name"]);
  return names;
}

// A mark or metric named for a time must be taken at that time, whatever the parameters.
TEST(Labels, FollowTheParameters) {
  std::string echo = test::scratch("echo-idle.json"), pool = test::scratch("pool-settle.json");
  auto c = test::run_harness(
      {"-w", "server-echo", "--smoke", "--idle", "0.7", "-a", "glibc", "-n", "1", "-q", "-o", echo});
  ASSERT_EQ(c.exit_code, 0) << c.err << c.out;
  Json run = test::load_json(echo)["runs"][0];
  EXPECT_EQ(mark_names(run), (std::vector<std::string>{"load-start", "load-end", "idle+0.1s", "idle+0.7s", "end"}));
  for (const char* m : {"rss_idle_end_kb", "anon_idle_end_kb"})
    EXPECT_TRUE(run["metrics"]["workload"].contains(m)) << m;
  // The idle figures at fixed times are the harness's, measured after load-end.
  EXPECT_EQ(run["curve_info"]["after"]["mark"], "load-end");
  EXPECT_TRUE(run["metrics"]["curve"]["after.rss_100ms_kb"]["value"].is_number());
  EXPECT_FALSE(run["metrics"]["workload"].contains("rss_idle_70s_kb"));

  c = test::run_harness({"-w", "pool-idle", "--smoke", "-a", "glibc", "-n", "1", "-q", "-o", pool});
  ASSERT_EQ(c.exit_code, 0) << c.err << c.out;
  EXPECT_EQ(mark_names(test::load_json(pool)["runs"][0]),
            (std::vector<std::string>{"start", "reads-done", "idle+0.3s", "end"}));
}

// server-echo's warm figure counts from the first response on: under scav, which keeps
// the request buffers between requests, the first touch is most of the load's faults.
TEST(ServerEcho, WarmFaultsLeaveOutTheFirstTouch) {
  std::string echo = test::scratch("echo-warm.json");
  auto c = test::run_harness({"-w", "server-echo", "--smoke", "--idle", "0.2", "-a", "scav", "-n", "1", "-q", "-o", echo});
  ASSERT_EQ(c.exit_code, 0) << c.err << c.out;
  Json w = test::load_json(echo)["runs"][0]["metrics"]["workload"];
  ASSERT_TRUE(w["faults_per_request"]["value"].is_number()) << w.dump();
  ASSERT_TRUE(w["faults_per_request_warm"]["value"].is_number()) << w.dump();
  const double all = w["faults_per_request"]["value"], warm = w["faults_per_request_warm"]["value"];
  EXPECT_GE(warm, 0.0);
  EXPECT_LT(warm, all / 2) << "the first response's faults were not left out: " << w.dump();
}

// The three shapes of classic allocator benchmarks are micro's own benchmarks,
// picked by --filter; what the filter leaves out is null with the reason.
TEST(Micro, TheThreeShapesAreMeasuredAndTheRestNamedAsFilteredOut) {
  std::string micro = test::scratch("micro-shapes.json");
  auto c = test::run_harness({"-w", "micro", "--smoke", "--filter", "batch_handoff|live_set|larson", "-a", "glibc",
                              "-n", "1", "-q", "-o", micro});
  ASSERT_EQ(c.exit_code, 0) << c.err << c.out;
  Json w = test::load_json(micro)["runs"][0]["metrics"]["workload"];
  for (const char* name : {"ns.batch_handoff_64b", "ns.live_set_10k_8b_4k", "ns.larson_2t_8b_1000b"}) {
    ASSERT_TRUE(w.contains(name) && w[name]["value"].is_number()) << name << ": " << w.dump();
    EXPECT_GT(w[name]["value"].get<double>(), 0.0) << name;
  }
  EXPECT_TRUE(w["ns.malloc_free_128k"]["value"].is_null()) << w.dump();
  EXPECT_NE(w["ns.malloc_free_128k"].dump().find("excluded by --filter"), std::string::npos) << w.dump();
}

// --pin keeps benchmark thread i on the i-th CPU the workload may use: each
// thread's CPU at the end of its timed loop is that one (a 2-thread benchmark
// uses two CPUs where there are two); without it nothing is pinned.
TEST(Micro, PinKeepsEachBenchmarkThreadOnItsCpu) {
  std::string pinned = test::scratch("micro-pinned.json");
  auto c = test::run_harness({"-w", "micro", "--smoke", "--pin", "--filter", "batch_handoff|live_set", "-a", "glibc",
                              "-n", "1", "-q", "-o", pinned});
  ASSERT_EQ(c.exit_code, 0) << c.err << c.out;
  Json p = test::load_json(pinned)["runs"][0]["data"]["pinning"];
  ASSERT_TRUE(p["cpus"].is_array() && !p["cpus"].empty()) << p.dump();
  const std::vector<int> cpus = p["cpus"].get<std::vector<int>>();
  EXPECT_EQ(p["ran_on"]["live_set_10k_8b_4k"], Json::array({cpus[0]})) << p.dump();
  EXPECT_EQ(p["ran_on"]["batch_handoff_64b"], Json::array({cpus[0], cpus[1 % cpus.size()]})) << p.dump();
  EXPECT_EQ(p["allowed"]["live_set_10k_8b_4k"], Json::array({1})) << p.dump();
  EXPECT_EQ(p["allowed"]["batch_handoff_64b"], Json::array({1, 1})) << p.dump();
  // The one-CPU variant puts both of its threads on the first CPU.
  EXPECT_EQ(p["ran_on"]["batch_handoff_64b_1cpu"], Json::array({cpus[0], cpus[0]})) << p.dump();
  EXPECT_EQ(p["allowed"]["batch_handoff_64b_1cpu"], Json::array({1, 1})) << p.dump();

  std::string free_ = test::scratch("micro-unpinned.json");
  c = test::run_harness(
      {"-w", "micro", "--smoke", "--filter", "live_set|batch_handoff_64b_1cpu", "-a", "glibc", "-n", "1", "-q", "-o", free_});
  ASSERT_EQ(c.exit_code, 0) << c.err << c.out;
  p = test::load_json(free_)["runs"][0]["data"]["pinning"];
  EXPECT_EQ(p["cpus"], Json::array()) << p.dump();
  EXPECT_EQ(p["allowed"]["live_set_10k_8b_4k"], Json::array({static_cast<int>(cpus.size())})) << p.dump();
  // Without --pin too, and the main thread (Google Benchmark's thread 0) gets its
  // CPUs back: live_set, which runs after it on that thread, was allowed all of them.
  const Json one = p["ran_on"]["batch_handoff_64b_1cpu"];
  ASSERT_TRUE(one.is_array() && one.size() == 2) << p.dump();
  EXPECT_EQ(one[0], one[1]) << p.dump();
  EXPECT_EQ(p["allowed"]["batch_handoff_64b_1cpu"], Json::array({1, 1})) << p.dump();
}

// The table shows what the workload declares as its result, with its unit.
TEST(SummaryTable, ShowsTheWorkloadsHeadlineFigures) {
  auto c = test::run_harness(
      {"-w", "thp-partial", "--smoke", "-a", "glibc", "-n", "1", "-q", "-o", test::scratch("thp-table.json")});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("RSS settled MB"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("RSS at exit MB"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("final RSS"), std::string::npos) << c.out;
}

TEST(CompareCli, BadInputIsExitTwo) {
  auto missing = test::run_harness({"compare", "--baseline", "glibc", "--workload", "burst-writefile", "--smoke"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--candidate"), std::string::npos) << missing.err;
  auto unknown = test::run_harness({"compare", "--baseline", "glibc", "--candidate", "hoard", "--workload", "burst-writefile"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("'hoard'"), std::string::npos) << unknown.err;
  auto one = test::run_harness({"compare", "/etc/hostname"});
  EXPECT_EQ(one.exit_code, 2);
  auto not_report = test::run_harness({"compare", "/etc/hostname", "/etc/hostname"});
  EXPECT_EQ(not_report.exit_code, 2);
  EXPECT_NE(not_report.err.find("/etc/hostname: not JSON"), std::string::npos) << not_report.err;
  auto rev = test::run_harness({"compare", "--baseline", "scav@no-such-rev", "--candidate", "glibc", "--workload", "burst-writefile"});
  EXPECT_EQ(rev.exit_code, 2);
  EXPECT_NE(rev.err.find("'no-such-rev'"), std::string::npos) << rev.err;
}

TEST(EndToEnd, ACrashAmongOkRunsIsLeftOutOfTheMedians) {
  setenv("MEMHARNESS_WORKLOAD_DIR", TEST_WORKLOAD_DIR, 1);
  const std::string path = test::scratch("crash-second.json");
  const std::string counter = test::scratch("crash-second.count");
  auto c = test::run_harness({"--workload", "misbehave", "--mode", "crash-second", "--counter", counter, "-a", "glibc",
                              "--runs", "3", "--quiet", "--out", path});
  unsetenv("MEMHARNESS_WORKLOAD_DIR");
  EXPECT_EQ(c.exit_code, 1) << c.err;
  Json j = test::load_json(path);
  ASSERT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["runs"][0]["status"], "ok");
  EXPECT_EQ(j["runs"][1]["status"], "crashed");
  EXPECT_EQ(j["runs"][2]["status"], "ok");
  ASSERT_EQ(j["summary"].size(), 1u);
  EXPECT_EQ(j["summary"][0]["runs_ok"], 2);
  EXPECT_EQ(j["summary"][0]["runs_total"], 3);
  EXPECT_EQ(j["summary"][0]["metrics"]["peak_rss_kb"]["n"], 2);  // the crash is not in the median
}

TEST(EndToEnd, OnATerminalTheProgressLineMovesDuringARun) {
  // script(1) gives the harness a terminal, as a user's shell would.
  setenv("MEMHARNESS_WORKLOAD_DIR", TEST_WORKLOAD_DIR, 1);
  const std::string path = test::scratch("progress.json");
  const std::string cmd = std::string(HARNESS_BIN) +
                          " --workload misbehave --mode sleep --ms 2500 -a glibc --runs 1 --sample-ms 5000 --out " + path;
  auto c = run_capture({"/usr/bin/script", "-q", "-e", "-c", cmd, "/dev/null"});
  unsetenv("MEMHARNESS_WORKLOAD_DIR");
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  // Redrawn with the elapsed time and the last mark while the run goes, even
  // when samples are far apart (--sample-ms 5000).
  std::set<std::string> elapsed;
  const std::regex line(R"(repetition 1: (\d+\.\d) s, past mark tick)");
  for (auto it = std::sregex_iterator(c.out.begin(), c.out.end(), line); it != std::sregex_iterator(); ++it)
    elapsed.insert((*it)[1]);
  EXPECT_GE(elapsed.size(), 3u) << c.out;
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

// The curve metrics of a real run: idle-return under scav gives its 64 MiB
// back after the "freed" mark, which the workload declares; the phases' peaks
// are the kernel's (VmHWM reset at each mark); the exports follow the table.
TEST(CurveEndToEnd, IdleReturnUnderScavGivesBackAfterItsFreedMark) {
  const std::string out = test::scratch("curve-idle.json"), md = test::scratch("curve-idle.md"),
                    csv = test::scratch("curve-idle.csv");
  auto c = test::run_harness({"-w", "idle-return", "--smoke", "-a", "scav", "-n", "1", "-q", "-o", out,
                              "--export-markdown", md, "--export-csv", csv});
  ASSERT_EQ(c.exit_code, 0) << c.err << c.out;
  EXPECT_NE(c.out.find("90% given"), std::string::npos) << c.out;  // a long title takes two lines
  Json report = test::load_json(out);
  Json run = report["runs"][0];
  EXPECT_EQ(run["curve_info"]["after"]["mark"], "freed");
  EXPECT_EQ(run["curve_info"]["after"]["start_from"], "the start mark");
  const Json& curve = run["metrics"]["curve"];
  ASSERT_TRUE(curve["after.ms_to_90pct"]["value"].is_number()) << curve.dump();
  const double to_half = curve["after.ms_to_half"]["value"], to_90 = curve["after.ms_to_90pct"]["value"];
  EXPECT_GE(to_90, to_half);
  EXPECT_LT(to_90, 500);  // the idle time at smoke size
  // The workload's own reading, every 5 ms: back within --tolerance (4 MiB at smoke
  // size) of the start RSS, when it put its baseline mark; later than 90% given back.
  const Json& back = run["metrics"]["workload"]["ms_back_to_start"];
  ASSERT_TRUE(back["value"].is_number()) << back.dump();
  const double back_ms = back["value"];
  EXPECT_GE(back_ms + 15, to_90);  // the harness samples every 10 ms, the workload every 5
  double freed_t = -1, baseline_t = -1;
  for (const auto& m : run["marks"]) {
    if (m["name"] == "freed") freed_t = m["t_ms"];
    if (m["name"] == "baseline") baseline_t = m["t_ms"];
  }
  ASSERT_GE(baseline_t, 0) << run["marks"].dump();
  // Marks are stamped when the harness reads them: on a busy machine either may
  // be read up to a sampling interval (10 ms) late.
  EXPECT_NEAR(baseline_t - freed_t, back_ms, 15);
  // The peak of the allocating phase is the run's: the whole heap is resident there
  // (the free may first write a page or two of the allocator's static data).
  const double peak = run["metrics"]["peak_rss_kb"], phase_peak = curve["phase.start.peak_rss_kb"]["value"];
  EXPECT_GE(phase_peak + 16, peak);
  EXPECT_GT(phase_peak, 64 * 1024);
  for (const auto& p : run["curve_info"]["phases"]) {
    if (p["name"] != "end") {
      EXPECT_EQ(p["peak_from"], "VmHWM") << p.dump();
    }
  }
  EXPECT_EQ(run["sampler"]["hwm_reset_error"], "");
  // The manifest names every metric of the report with its unit.
  EXPECT_EQ(report["metrics"]["after.ms_to_90pct"]["unit"], "ms");
  EXPECT_EQ(report["metrics"]["peak_rss_kb"]["display_unit"], "MB");
  EXPECT_EQ(report["metrics"]["workload.rss_end_kb"]["unit"], "KiB");
  EXPECT_NE(test::slurp(md).find("| workload | allocator | runs ok |"), std::string::npos) << test::slurp(md);
  EXPECT_NE(test::slurp(csv).find("idle-return,scav,,1,1,after.ms_to_90pct,ms,"), std::string::npos)
      << test::slurp(csv);

  // --after picks another mark: from "allocated", nothing is given back before the free.
  const std::string other = test::scratch("curve-idle-after.json");
  c = test::run_harness({"-w", "idle-return", "--smoke", "-a", "scav", "-n", "1", "-q", "-o", other, "--after",
                         "allocated"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  run = test::load_json(other)["runs"][0];
  EXPECT_EQ(run["curve_info"]["after"]["mark"], "allocated");
  EXPECT_EQ(run["curve_info"]["after"]["chosen_by"], "--after");
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

// leak-rate --smoke under glibc with the ledger: the live heap is called
// growing, at the set rate within 20%.
TEST(LeakRateSmoke, TheLiveHeapGrowsAtTheSetRate) {
  const std::string path = test::scratch("leak-rate-smoke.json");
  const Captured c = test::run_harness(
      {"-w", "leak-rate", "--smoke", "--ledger", "-a", "glibc", "--runs", "1", "--quiet", "--out", path});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const Json run = test::load_json(path)["runs"][0];
  const double set = run["metrics"]["workload"]["set_mb_per_min"]["value"];
  const Json live = run["growth"]["series"][0];
  ASSERT_EQ(live["name"], "live") << run["growth"].dump();
  EXPECT_EQ(live["direction"], "growing") << live.dump();
  EXPECT_NEAR(live["mb_per_min"].get<double>(), set, 0.2 * set) << live.dump();
  EXPECT_NE(run["growth"]["verdict"].get<std::string>().find("live heap growing at"), std::string::npos);
}

}  // namespace
}  // namespace mh
