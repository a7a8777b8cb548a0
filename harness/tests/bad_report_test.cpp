// Malformed reports and thresholds files fed to compare, merge and --resume:
// each is refused with exit 2 naming the file, the JSON path, what was expected
// and what was found; the report itself is left as it was, and nothing is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include "report/report_json.h"
#include "test_util.h"

namespace mh {
namespace {

namespace fs = std::filesystem;

// A report as the harness writes it: one ok run with two samples, a mark and a thread.
Json good_report() {
  RunRecord r;
  r.workload = "burst-writefile";
  r.params = Json{{"calls", 3}};
  r.allocator.name = r.allocator.family = "glibc";
  r.allocator.env["X"] = "1";
  r.allocator.verified = true;
  r.repetition = 1;
  r.status = Status::Ok;
  r.exit.code = 0;
  Sample a, b;
  a.t_ms = 1, a.rss_kb = 100;
  b.t_ms = 11, b.rss_kb = 200;
  r.samples = {a, b};
  r.peak_rss_kb = 200;
  r.marks.push_back(Mark{5, "start", a, 150, true, {}, {}});
  r.threads.push_back(ThreadStat{7, "main", 1000, 0, 1, 2});
  return make_report(Json{{"plan", Json{{"suite", ""}}}}, {r});
}

std::string write_json(const std::string& name, const Json& j) {
  const std::string path = test::scratch(name);
  std::ofstream(path) << j.dump();
  return path;
}

struct Variant {
  const char* name;
  std::function<void(Json&)> spoil;
  const char* path_and_what;  // in the message, after the file's name
};

Json& run0(Json& j) { return j["runs"][0]; }

const Variant kVariants[] = {
    // The ones that ended in an uncaught type_error before the reader checked types.
    {"run-not-an-object", [](Json& j) { run0(j) = 5; }, "runs[0]: expected an object, found 5"},
    {"workload-a-number", [](Json& j) { run0(j)["workload"] = 5; }, "runs[0].workload: expected a string, found 5"},
    {"status-a-number", [](Json& j) { run0(j)["status"] = 3; }, "runs[0].status: expected a string, found 3"},
    {"complete-a-string", [](Json& j) { j["complete"] = "yes"; }, "complete: expected true or false, found \"yes\""},
    {"repetition-a-string", [](Json& j) { run0(j)["repetition"] = "1"; },
     "runs[0].repetition: expected an integer from 1 to 1000000, found \"1\""},
    {"t_ms-a-string", [](Json& j) { run0(j)["samples"]["t_ms"] = "0"; },
     "runs[0].samples.t_ms: expected an array, found \"0\""},
    {"manifest-unit-a-number", [](Json& j) { j["metrics"]["peak_rss_kb"]["unit"] = 5; },
     "metrics.peak_rss_kb.unit: expected a string, found 5"},
    {"context-a-number", [](Json& j) { j["context"] = 5; }, "context: expected an object, found 5"},
    {"mark-name-a-number", [](Json& j) { run0(j)["marks"][0]["name"] = 5; },
     "runs[0].marks[0].name: expected a string, found 5"},
    {"thread-tid-a-string", [](Json& j) { run0(j)["threads"][0]["tid"] = "x"; },
     "runs[0].threads[0].tid: expected an integer from 0 to 2147483647, found \"x\""},
    {"exit-error-a-number", [](Json& j) { run0(j)["exit"]["error"] = 5; },
     "runs[0].exit.error: expected a string, found 5"},
    {"allocator-env-a-number", [](Json& j) { run0(j)["allocator"]["env"]["X"] = 5; },
     "runs[0].allocator.env.X: expected a string, found 5"},
    // Read without a crash before, but wrong.
    {"runs-not-an-array", [](Json& j) { j["runs"] = Json::object(); }, "runs: expected an array, found an object"},
    {"t_ms-negative", [](Json& j) { run0(j)["samples"]["t_ms"][0] = -5; },
     "runs[0].samples.t_ms[0]: expected a number from 0 to 1000000000000, found -5"},
    {"peak-rss-past-any-machine", [](Json& j) { run0(j)["metrics"]["peak_rss_kb"] = 1.7e308; },
     "runs[0].metrics.peak_rss_kb: expected an integer from 0 to 1099511627776, found 1.7e+308"},
    {"repetition-past-int", [](Json& j) { run0(j)["repetition"] = 1e300; },
     "runs[0].repetition: expected an integer from 1 to 1000000, found 1e+300"},
    {"status-unknown", [](Json& j) { run0(j)["status"] = "fine"; },
     "runs[0].status: expected one of ok, failed, crashed, timeout, interrupted, oom, found \"fine\""},
};

class BadReport : public ::testing::TestWithParam<Variant> {};

void expect_refused(const Captured& r, const std::string& file, const std::string& path_and_what) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(file + ": " + path_and_what), std::string::npos)
      << "expected '" << file << ": " << path_and_what << "' in: " << r.err;
}

TEST_P(BadReport, CompareMergeAndResumeRefuseItNamingThePath) {
  const Variant& v = GetParam();
  Json spoiled = good_report();
  v.spoil(spoiled);
  const std::string bad = write_json(std::string(v.name) + ".json", spoiled);
  const std::string good = write_json(std::string(v.name) + "-good.json", good_report());
  const std::string before = test::slurp(bad);
  const std::string out = test::scratch(std::string(v.name) + "-out.json");

  expect_refused(test::run_harness({"compare", bad, good, "--out", out}), bad, v.path_and_what);
  expect_refused(test::run_harness({"merge", good, bad, "--out", out}), bad, v.path_and_what);
  expect_refused(test::run_harness({"-w", "burst-writefile", "--smoke", "--resume", bad}), bad, v.path_and_what);
  EXPECT_FALSE(fs::exists(out)) << "something was written";
  EXPECT_EQ(test::slurp(bad), before) << "--resume changed the report it could not read";
}

INSTANTIATE_TEST_SUITE_P(Variants, BadReport, ::testing::ValuesIn(kVariants),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// 200 000 levels inside runs[0].data: refused at the nesting limit, before
// any recursive copy or dump could exhaust the stack.
TEST(BadReport, DeepNestingIsRefusedNamingWhere) {
  std::string text = good_report().dump();
  const std::string data = "\"data\":{}";
  const size_t at = text.find(data);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, data.size(), "\"data\":" + std::string(200000, '[') + std::string(200000, ']'));
  const std::string bad = test::scratch("deep.json");
  std::ofstream(bad) << text;
  const std::string out = test::scratch("deep-out.json");
  for (const auto& args : std::vector<std::vector<std::string>>{{"compare", bad, bad, "--out", out},
                                                                {"merge", bad, "--out", out}}) {
    auto r = test::run_harness(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(bad + ": runs[0].data[0]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nested deeper than 64 levels"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(out));
}

// A cell that was never measured is null in the report, and stays null when
// the report is read back and written again (merge); it never becomes 0.
TEST(BadReport, ANullSampleCellStaysNullThroughMerge) {
  Json j = good_report();
  run0(j)["samples"]["anon_kb"][1] = nullptr;
  const std::string in = write_json("null-cell.json", j), out = test::scratch("null-cell-merged.json");
  auto r = test::run_harness({"merge", in, "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json merged = test::load_json(out);
  EXPECT_TRUE(merged["runs"][0]["samples"]["anon_kb"][1].is_null()) << merged["runs"][0]["samples"].dump();
  EXPECT_EQ(merged["runs"][0]["samples"]["rss_kb"], Json::array({100, 200}));
}

TEST(BadReport, AThresholdsEntryOfTheWrongTypeIsNamed) {
  const std::string good = write_json("thr-good.json", good_report());
  const std::string thresholds = write_json("thr.json", Json{{"metrics", {{"peak_rss_kb", {{"better", 5}}}}}});
  const std::string out = test::scratch("thr-out.json");
  auto r = test::run_harness({"compare", good, good, "--thresholds", thresholds, "--out", out});
  expect_refused(r, thresholds, "metrics.peak_rss_kb.better: expected a string, found 5");
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace mh
