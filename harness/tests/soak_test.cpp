// --soak: its duration's parsing and the series kept bounded however long the
// run (core/soak.h), on hand-made samples.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "core/soak.h"
#include "test_util.h"

namespace mh {
namespace {

TEST(Soak, DurationsWithTheirUnit) {
  EXPECT_EQ(parse_duration("30s"), 30.0);
  EXPECT_EQ(parse_duration("10m"), 600.0);
  EXPECT_EQ(parse_duration("1.5h"), 5400.0);
  EXPECT_EQ(parse_duration("0.5s"), 0.5);
  EXPECT_EQ(parse_duration(".5m"), 30.0);
}

TEST(Soak, DurationsRefused) {
  for (const char* bad : {"", "10", "m", "10x", "10 m", "-5s", "0s", "0m", "1e400s", "nanm", "infs", "10ms",
                          "+5s", "8d", "169h", "5s ", " 5s"})
    EXPECT_FALSE(parse_duration(bad)) << bad;
  EXPECT_TRUE(parse_duration("168h"));  // a week is the most
}

Sample at(double t, int64_t rss, int64_t minflt = 0) { return Sample{.t_ms = t, .rss_kb = rss, .minflt = minflt}; }

TEST(Soak, MergedPairKeepsThePeakAndTheLaterCounters) {
  Sample a = at(10, 900, 5), b = at(20, 100, 7);
  a.heap_live_kb = 40;
  b.heap_live_kb = 60;
  const Sample m = merge_samples(a, b);
  EXPECT_EQ(m.t_ms, 20);
  EXPECT_EQ(m.rss_kb, 900);
  EXPECT_EQ(m.minflt, 7);
  EXPECT_EQ(m.heap_live_kb, 60);
}

TEST(Soak, AMissingCellTakesTheOthers) {
  Sample a = at(10, 900), b = at(20, 100);
  a.missing = column_bit("rss_kb");
  const Sample m = merge_samples(a, b);
  EXPECT_EQ(m.rss_kb, 100);
  EXPECT_EQ(m.missing, 0u);
  b.missing = column_bit("rss_kb");
  EXPECT_EQ(merge_samples(a, b).missing, column_bit("rss_kb"));
}

TEST(Soak, UnderTheBoundEverySampleIsKept) {
  SeriesBound bound(8);
  std::vector<Sample> series;
  for (int i = 0; i < 7; ++i) bound.add(series, at(i * 10, i));
  EXPECT_EQ(series.size(), 7u);
  EXPECT_EQ(bound.halvings(), 0);
  bound.flush(series);
  EXPECT_EQ(series.size(), 7u);
}

TEST(Soak, AFullSeriesIsHalvedAndKeepsItsPeak) {
  SeriesBound bound(8);
  std::vector<Sample> series;
  // RSS 0..7, with one spike of 1000 at the sixth sample.
  for (int i = 0; i < 8; ++i) bound.add(series, at(i * 10, i == 5 ? 1000 : i));
  ASSERT_EQ(series.size(), 4u);
  EXPECT_EQ(bound.halvings(), 1);
  EXPECT_EQ(bound.bucket(), 2u);
  const int64_t rss[] = {1, 3, 1000, 7};
  const double t[] = {10, 30, 50, 70};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(series[i].rss_kb, rss[i]) << i;
    EXPECT_EQ(series[i].t_ms, t[i]) << i;
  }
}

TEST(Soak, ALongSeriesStaysBoundedAtAnEvenInterval) {
  SeriesBound bound(64);
  std::vector<Sample> series;
  const int n = 100000;
  int64_t peak = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t rss = (i * 7919) % 1013;
    peak = std::max(peak, rss);
    bound.add(series, at(i, rss, i));
    ASSERT_LT(series.size(), 64u);
  }
  // 100000 samples into at most 63 points: buckets of 2048 (11 halvings).
  EXPECT_EQ(bound.halvings(), 11);
  for (size_t i = 1; i < series.size(); ++i) EXPECT_EQ(series[i].t_ms - series[i - 1].t_ms, 2048) << i;
  bound.flush(series);
  EXPECT_LE(series.size(), 65u);
  // The last sample as it was, the peak kept.
  EXPECT_EQ(series.back().t_ms, n - 1);
  EXPECT_EQ(series.back().rss_kb, ((n - 1) * 7919) % 1013);
  EXPECT_EQ(series.back().minflt, n - 1);
  int64_t kept = 0;
  for (const auto& s : series) kept = std::max(kept, s.rss_kb);
  EXPECT_EQ(kept, peak);
}

// A soak's series: one time axis from the first start, rising across the
// starts of the child, the last sample past the duration.
void expect_one_series(const Json& run, double duration_ms) {
  const Json& t = run["samples"]["t_ms"];
  ASSERT_GT(t.size(), 10u);
  for (size_t i = 1; i < t.size(); ++i) ASSERT_GE(t[i].get<double>(), t[i - 1].get<double>()) << i;
  EXPECT_GE(t.back().get<double>(), duration_ms);
  EXPECT_EQ(run["sampler"]["series"]["bound"], kSoakSeriesPoints);
  EXPECT_EQ(run["sampler"]["series"]["halvings"], 0);
  EXPECT_EQ(run["sampler"]["series"]["effective_interval_ms"], 10);
}

TEST(SoakRun, AWorkloadIsStartedAgainUntilTheDurationEnds) {
  setenv("MEMHARNESS_WORKLOAD_DIR", TEST_WORKLOAD_DIR, 1);
  const std::string path = test::scratch("soak-workload.json");
  auto c = test::run_harness({"--workload", "misbehave", "--mode", "sleep", "--ms", "150", "--soak", "1.5s", "-a",
                              "glibc", "--runs", "1", "--quiet", "--out", path});
  unsetenv("MEMHARNESS_WORKLOAD_DIR");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const Json run = test::load_json(path)["runs"][0];
  EXPECT_EQ(run["status"], "ok");
  const Json& soak = run["soak"];
  EXPECT_EQ(soak["duration_s"], 1.5);
  EXPECT_EQ(soak["complete"], true);
  EXPECT_EQ(soak["loops"], 0);
  // 1.5 s of 150 ms runs: at least 3 on a loaded machine, at most 11.
  EXPECT_GE(soak["repetitions"].get<int>(), 3);
  EXPECT_LE(soak["repetitions"].get<int>(), 11);
  EXPECT_GE(soak["ran_s"].get<double>(), 1.5);
  expect_one_series(run, 1500);
  EXPECT_EQ(test::load_json(path)["context"]["plan"]["soak_s"], 1.5);
}

TEST(SoakRun, AServersLoadGeneratorIsRunAgainUntilTheDurationEnds) {
  const std::string path = test::scratch("soak-load.json");
  auto c = test::run_harness({"--soak", "1.5s", "-a", "glibc", "--runs", "1", "--quiet", "--out", path, "--ready",
                              "^up$", "--load", "sleep 0.1", "--idle", "0.1", "--", "sh", "-c",
                              "echo up; exec sleep 60"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const Json run = test::load_json(path)["runs"][0];
  EXPECT_EQ(run["status"], "ok") << run["exit"];
  const Json& soak = run["soak"];
  EXPECT_EQ(soak["repetitions"], 1);
  EXPECT_GE(soak["loops"].get<int>(), 5);
  EXPECT_LE(soak["loops"].get<int>(), 15);
  EXPECT_EQ(run["data"]["load"]["loops"], soak["loops"]);
  EXPECT_EQ(soak["complete"], true);
  // A mark after the 1st, 2nd and 4th runs of the load generator, then load-end.
  std::vector<std::string> names;
  for (const auto& m : run["marks"]) names.push_back(m["name"]);
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(std::count(names.begin(), names.end(), "load-start"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "load-end"), 1);
  for (const char* loop : {"loop-1", "loop-2", "loop-4"}) EXPECT_EQ(std::count(names.begin(), names.end(), loop), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "loop-3"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "loop-5"), 0);
  expect_one_series(run, 1500);
}

TEST(SoakRun, ABadDurationIsRefusedNamingTheFormsAndNothingRuns) {
  for (const char* bad : {"10", "5x", "0s", "1y"}) {
    const std::string path = test::scratch("soak-bad.json");
    auto c = test::run_harness({"--workload", "burst-writefile", "--smoke", "--soak", bad, "-a", "glibc", "--out", path});
    EXPECT_EQ(c.exit_code, 2) << bad << c.err;
    EXPECT_NE(c.err.find(std::string("--soak ") + bad + " is not a duration"), std::string::npos) << c.err;
    EXPECT_NE(c.err.find("30s, 10m, 1.5h"), std::string::npos) << c.err;
    EXPECT_FALSE(std::filesystem::exists(path));
  }
}

}  // namespace
}  // namespace mh
