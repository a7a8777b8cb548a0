// Comparison analysis on fake run records, thresholds and their patterns.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "compare/compare.h"
#include "compare/compare_report.h"
#include "report/report_json.h"
#include "test_util.h"

namespace mh {
namespace {

RunRecord run(const std::string& role, int rep, double peak, double faults) {
  RunRecord r;
  r.workload = "w";
  r.allocator.name = role == kRoleCandidate ? "cand" : "base";
  r.role = role;
  r.repetition = rep;
  r.status = Status::Ok;
  r.peak_rss_kb = int64_t(peak);
  r.samples.push_back(Sample{});  // a run without samples has no RSS figures
  r.workload_metrics["faults_per_request"].value = faults;
  return r;
}

Thresholds rules() {
  Thresholds t;
  t.rules.push_back({"peak_rss_kb", MetricRule{compare::Direction::Lower, 0.03, 1024}});
  t.rules.push_back({"workload.*", MetricRule{compare::Direction::Lower, 0.10, 0}});
  return t;
}

// Five rounds of A, B, A' with the given medians and a little spread.
std::vector<RunRecord> rounds(double base_peak, double cand_peak, double base_faults, double cand_faults) {
  std::vector<RunRecord> out;
  const double jitter[] = {-0.004, 0.002, 0, 0.003, -0.001};
  for (int i = 0; i < 5; ++i) {
    out.push_back(run(kRoleBaseline, i + 1, base_peak * (1 + jitter[i]), base_faults * (1 + jitter[i])));
    out.push_back(run(kRoleCandidate, i + 1, cand_peak * (1 + jitter[(i + 2) % 5]), cand_faults * (1 + jitter[(i + 2) % 5])));
    out.push_back(run(kRoleBaselineAgain, i + 1, base_peak * (1 + jitter[(i + 1) % 5]), base_faults * (1 + jitter[(i + 1) % 5])));
  }
  return out;
}

const MetricComparison* find(const Comparison& c, const std::string& metric) {
  for (const auto& m : c.workloads.at(0).metrics)
    if (m.metric == metric) return &m;
  return nullptr;
}

TEST(Compare, SameNumbersAreNoChange) {
  Comparison c = analyze(rounds(500000, 500000, 10, 10), rules(), {});
  ASSERT_EQ(c.workloads.size(), 1u);
  EXPECT_FALSE(c.regressed());
  EXPECT_EQ(find(c, "peak_rss_kb")->verdict, compare::Verdict::NoChange);
  EXPECT_EQ(c.rounds, 5);
  EXPECT_TRUE(c.warnings.empty());
}

// The baseline's second run moves 30% from its first in four of five rounds:
// one run's scatter within its round is 1.4826 MAD of the log ratios over
// sqrt(2), what a squeeze allows a limit when it exceeds the threshold.
TEST(Compare, TheScatterOfOneRunWithinItsRoundIsTheNoiseFloorWithinRounds) {
  std::vector<RunRecord> runs;
  const double again[] = {1.3, 1 / 1.3, 1.3, 1 / 1.3, 1.0};
  for (int i = 0; i < 5; ++i) {
    runs.push_back(run(kRoleBaseline, i + 1, 500000, 10));
    runs.push_back(run(kRoleCandidate, i + 1, 500000, 10));
    runs.push_back(run(kRoleBaselineAgain, i + 1, 500000, 10 * again[i]));
  }
  const auto* m = find(analyze(runs, rules(), {}), "workload.faults_per_request");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(m->paired_noise_floor.has_value());
  EXPECT_NEAR(*m->paired_noise_floor, std::expm1(1.4826 * std::log(1.3) / std::sqrt(2.0)), 1e-9);
  EXPECT_NEAR(*m->paired_noise_floor, 0.316, 0.001);
  // Without the baseline's second run there is none.
  std::vector<RunRecord> two;
  for (const auto& r : runs)
    if (r.role != kRoleBaselineAgain) two.push_back(r);
  EXPECT_FALSE(find(analyze(two, rules(), {}), "workload.faults_per_request")->paired_noise_floor.has_value());
}

TEST(Compare, ALargeWorseningIsARegression) {
  Comparison c = analyze(rounds(500000, 600000, 10, 10), rules(), {});
  const auto* m = find(c, "peak_rss_kb");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->verdict, compare::Verdict::Regression);
  EXPECT_NEAR(m->change, 0.2, 0.01);
  EXPECT_LT(m->p, 0.05);
  EXPECT_LT(m->noise_floor, 0.01);
  EXPECT_TRUE(c.regressed());
}

// Faults per request double: a regression of a metric "w" does not gate is
// reported; the verdict, the headline and the exit code follow the gated ones.
TEST(Compare, OnlyGatedMetricsDecideTheVerdict) {
  Comparison c = analyze(rounds(500000, 500000, 10, 20), rules(), {});
  const auto* faults = find(c, "workload.faults_per_request");
  ASSERT_NE(faults, nullptr);
  EXPECT_EQ(faults->verdict, compare::Verdict::Regression);
  EXPECT_FALSE(faults->gated);
  EXPECT_TRUE(find(c, "peak_rss_kb")->gated);  // the default set
  EXPECT_FALSE(c.regressed());
  EXPECT_EQ(exit_code(c), kExitNoRegression);
  // Gated by default: peak RSS, wall and CPU time (the default set) that the runs have.
  EXPECT_EQ(comparison_summary(c),
            "no regression in 3 gated metrics; 3 no change; reported: 1 regression, 3 no change -- candidate cand "
            "against baseline base, 5 rounds, alpha 0.05");

  CompareSettings s;
  s.gate = Gate{Gate::Kind::Named, {"workload.*"}};
  c = analyze(rounds(500000, 500000, 10, 20), rules(), s);
  EXPECT_TRUE(c.regressed());
  EXPECT_EQ(exit_code(c), kExitRegression);
  const std::string summary = comparison_summary(c);
  EXPECT_EQ(summary.rfind("REGRESSION in 1 of 1 gated metric: workload.faults_per_request +100.0% (p 0.00", 0), 0u)
      << summary;
  EXPECT_NE(comparison_table(c).rfind(summary + "\n", 0), std::string::npos) << comparison_table(c);
  EXPECT_EQ(comparison_to_json(c, Json::object())["summary"], summary);
}

TEST(Compare, AFailedRunMakesItIncompleteNeverNoRegression) {
  auto runs = rounds(500000, 500000, 10, 10);
  runs[1].status = Status::Crashed;  // a candidate's
  Comparison c = analyze(runs, rules(), {});
  EXPECT_EQ(exit_code(c), kExitIncomplete);
  const std::string summary = comparison_summary(c);
  EXPECT_EQ(summary.rfind("INCOMPLETE (1 run failed: 0 of the baseline, 1 of the candidate): none of 3 gated metrics "
                          "regressed in the runs it has",
                          0),
            0u)
      << summary;
  EXPECT_EQ(summary.find("no regression"), std::string::npos);
  EXPECT_NE(comparison_markdown(c).find("### memharness: INCOMPLETE (1 run failed"), std::string::npos);
}

TEST(Compare, AnImprovementIsNotARegression) {
  Comparison c = analyze(rounds(500000, 400000, 10, 5), rules(), {});
  EXPECT_EQ(find(c, "peak_rss_kb")->verdict, compare::Verdict::Improvement);
  EXPECT_EQ(find(c, "workload.faults_per_request")->verdict, compare::Verdict::Improvement);
  EXPECT_FALSE(c.regressed());
}

TEST(Compare, BelowTheAbsoluteFloorIsNoChange) {
  // +20% but only 200 KiB: below min_delta of 1024 KiB.
  Comparison c = analyze(rounds(1000, 1200, 10, 10), rules(), {});
  EXPECT_EQ(find(c, "peak_rss_kb")->verdict, compare::Verdict::NoChange);
}

TEST(Compare, ANoisyBaselineHidesAChange) {
  auto runs = rounds(500000, 550000, 10, 10);
  for (auto& r : runs)
    if (r.role == kRoleBaselineAgain) r.peak_rss_kb = int64_t(r.peak_rss_kb * 1.2);  // A' far from A
  Comparison c = analyze(runs, rules(), {});
  const auto* m = find(c, "peak_rss_kb");
  EXPECT_GT(m->noise_floor, 0.15);
  EXPECT_NE(m->verdict, compare::Verdict::Regression);
}

TEST(Compare, FewRoundsWarnAndFailedRunsAreCounted) {
  auto runs = rounds(500000, 500000, 10, 10);
  runs.resize(6);  // two rounds
  runs[0].status = Status::Crashed;
  Comparison c = analyze(runs, rules(), {});
  EXPECT_EQ(c.failed_runs, 1);
  EXPECT_EQ(sample_size(c), "3 baseline and 2 candidate runs");  // A lost a run: no longer whole rounds
  ASSERT_EQ(c.warnings.size(), 3u);
  // 3 against 2 runs: the exact test's smallest p is 0.2, above alpha before any adjustment.
  EXPECT_NE(c.warnings[0].find("with 3 baseline and 2 candidate runs the smallest p-value the test can give is 0.2,"),
            std::string::npos) << c.warnings[0];
  EXPECT_NE(c.warnings[1].find("compares 1 run of the baseline with 2 of the baseline again, fewer than 5"),
            std::string::npos) << c.warnings[1];
  for (const auto& out : {comparison_markdown(c), comparison_table(c), dump_canonical(comparison_to_json(c, Json::object()))})
    EXPECT_NE(out.find("fewer than 5"), std::string::npos);
}

// Two reports of six runs each, as the README advises: the baseline's odd
// repetitions are A and its even ones A', the test has six runs a side.
TEST(Compare, TwoReportsOfSixRunsSayWhatTheyHad) {
  std::vector<RunRecord> runs;
  const double jitter[] = {-0.004, 0.002, 0, 0.003, -0.001, 0.001};
  for (int i = 0; i < 6; ++i) {
    runs.push_back(run(i % 2 == 0 ? kRoleBaseline : kRoleBaselineAgain, i + 1, 500000 * (1 + jitter[i]), 10));
    runs.push_back(run(kRoleCandidate, i + 1, 600000 * (1 + jitter[5 - i]), 10 * (1 + jitter[i])));
  }
  Comparison c = analyze(runs, rules(), {});
  EXPECT_EQ(c.rounds, 3);
  EXPECT_EQ(c.baseline_runs, 6);
  EXPECT_EQ(c.candidate_runs, 6);
  EXPECT_EQ(sample_size(c), "6 runs a side");
  const std::string table = comparison_table(c);
  EXPECT_NE(table.find("against baseline base, 6 runs a side, alpha 0.05"), std::string::npos) << table;
  EXPECT_EQ(table.find("rounds"), std::string::npos) << table;
  // Six against six can pass the adjustment: the only warning is about the noise floor's halves.
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "the noise floor compares 3 runs of the baseline with 3 of the baseline again, fewer than 5: "
                           "a rough guess");
  EXPECT_EQ(find(c, "peak_rss_kb")->verdict, compare::Verdict::Regression);
  Json j = comparison_to_json(c, Json::object());
  EXPECT_EQ(j["sample_size"], "6 runs a side");
  EXPECT_EQ(j["baseline_runs"], 6);

  runs.resize(6);  // three a side: no p-value can pass even before the adjustment
  Comparison three = analyze(runs, rules(), {});
  EXPECT_EQ(sample_size(three), "3 runs a side");
  ASSERT_EQ(three.warnings.size(), 2u);
  size_t tested = 0;  // the gated metrics with a direction: the verdict's Holm family
  for (const auto& m : three.workloads.at(0).metrics) tested += m.gated;
  EXPECT_GE(tested, 1u);
  EXPECT_EQ(three.warnings[0], fmt::format("with 3 baseline and 3 candidate runs the smallest p-value the test can give "
                                           "is 0.1, {:.1g} after the Holm adjustment over {} metrics: above alpha "
                                           "0.05, so no metric can be called a regression",
                                           std::min(1.0, 0.1 * double(tested)), tested));
  EXPECT_NE(find(three, "peak_rss_kb")->verdict, compare::Verdict::Regression);
}

TEST(CompareStats, SmallestP) {
  EXPECT_NEAR(compare::smallest_p(5, 5), 2.0 / 252, 1e-12);
  EXPECT_NEAR(compare::smallest_p(6, 6), 2.0 / 924, 1e-12);
  EXPECT_EQ(compare::smallest_p(0, 4), 1);
}

TEST(Compare, DeclaredDirectionAppliesWhenNoPatternMatches) {
  Thresholds t;
  t.fallback = MetricRule{compare::Direction::None, 0.05, 0};
  EXPECT_EQ(t.rule_for("workload.ms_to_back", "lower").direction, compare::Direction::Lower);
  EXPECT_EQ(t.rule_for("workload.ms_to_back", "").direction, compare::Direction::None);
  t.rules.push_back({"workload.ms_*", MetricRule{compare::Direction::Higher, 0.2, 0}});
  EXPECT_EQ(t.rule_for("workload.ms_to_back", "lower").direction, compare::Direction::Higher);
}

// Without a file, a metric's rule is the registry's; the file's patterns
// (fnmatch) override it, a family's members included.
TEST(Compare, TheRegistryGivesTheDefaultRuleAndPatternsOverrideIt) {
  Thresholds t;
  EXPECT_EQ(t.rule_for("after.ms_to_90pct").direction, compare::Direction::Lower);
  EXPECT_DOUBLE_EQ(t.rule_for("after.ms_to_90pct").min_delta, 10);
  EXPECT_EQ(t.rule_for("phase.freed.peak_rss_kb").direction, compare::Direction::None);
  EXPECT_DOUBLE_EQ(t.rule_for("phase.freed.peak_rss_kb").threshold, 0.03);
  t.rules.push_back({"phase.*.peak_rss_kb", MetricRule{compare::Direction::Lower, 0.1, 0}});
  t.rules.push_back({"perf.*", MetricRule{compare::Direction::Higher, 0.1, 0}});
  EXPECT_EQ(t.rule_for("phase.freed.peak_rss_kb").direction, compare::Direction::Lower);
  EXPECT_EQ(t.rule_for("perf.page-faults").direction, compare::Direction::Higher);
  EXPECT_EQ(t.rule_for("workload.perf").direction, compare::Direction::None);  // perf.* is a prefix pattern
  EXPECT_EQ(t.rule_for("peak_rss_kb2").direction, compare::Direction::None);    // not a registry name
}

TEST(Compare, TheShippedThresholdsFileLoads) {
  std::string error;
  auto t = load_thresholds(std::string(MEMHARNESS_SOURCE_DIR_FOR_TESTS) + "/ci/thresholds.json", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->rule_for("peak_rss_kb").direction, compare::Direction::Lower);
  EXPECT_DOUBLE_EQ(t->rule_for("peak_rss_kb").threshold, 0.03);
  EXPECT_EQ(t->rule_for("workload.ns.malloc_free_128k").direction, compare::Direction::Lower);
  EXPECT_EQ(t->rule_for("perf.cycles").direction, compare::Direction::None);
}

// "WORKLOAD:METRIC" is that workload's rule only; a colon after a dot is part
// of a metric pattern.
TEST(Compare, AWorkloadQualifiedPatternAppliesToThatWorkloadOnly) {
  Thresholds t;
  t.rules.push_back({"micro:wall_ms", MetricRule{compare::Direction::None, 0.10, 0}});
  t.rules.push_back({"perf.cycles:u", MetricRule{compare::Direction::Lower, 0.10, 0}});
  EXPECT_EQ(t.rule_for("wall_ms", "", "micro").direction, compare::Direction::None);
  EXPECT_EQ(t.rule_for("wall_ms", "", "idle-return").direction, compare::Direction::Lower);  // the registry's
  EXPECT_EQ(t.rule_for("wall_ms").direction, compare::Direction::Lower);
  EXPECT_EQ(t.rule_for("perf.cycles:u", "", "micro").direction, compare::Direction::Lower);
}

// micro's runs last --min-time per benchmark under any allocator: a faster one
// runs more iterations, so its longer run is no regression there; the same
// runs of another workload are.
TEST(Compare, MicroWallTimeIsInformationalWithTheShippedThresholds) {
  std::string error;
  auto t = load_thresholds(std::string(MEMHARNESS_SOURCE_DIR_FOR_TESTS) + "/ci/thresholds.json", error);
  ASSERT_TRUE(t) << error;
  for (const char* workload : {"micro", "w"}) {
    auto runs = rounds(500000, 500000, 10, 10);
    for (auto& r : runs) {
      r.workload = workload;
      r.wall_ms = r.cpu_ms = r.role == kRoleCandidate ? 2600 + r.repetition : 2000 + r.repetition;
    }
    Comparison c = analyze(runs, *t, {});
    EXPECT_EQ(c.regressed(), std::string(workload) == "w") << workload;
    ASSERT_NE(find(c, "wall_ms"), nullptr);
    EXPECT_EQ(find(c, "wall_ms")->verdict == compare::Verdict::Regression, std::string(workload) == "w")
        << workload;
  }
}

// ru_maxrss of a forked child keeps the harness's image from before its exec
// (4-13 MB whatever the workload, a noise floor of up to 30% on the quick
// suite): it is reported, but a comparison tests the workload's own VmHWM.
TEST(Compare, MaxrssIsInformationalAndVmHWMIsTested) {
  std::string error;
  auto t = load_thresholds(std::string(MEMHARNESS_SOURCE_DIR_FOR_TESTS) + "/ci/thresholds.json", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->rule_for("maxrss_kb").direction, compare::Direction::None);
  EXPECT_EQ(t->rule_for("hwm_kb").direction, compare::Direction::Lower);
}

TEST(Compare, ABadThresholdsFileNamesTheProblem) {
  std::string path = test::scratch("thresholds.json");
  std::ofstream(path) << R"({"metrics": {"peak_rss_kb": {"better": "smaller"}}})";
  std::string error;
  EXPECT_FALSE(load_thresholds(path, error));
  EXPECT_NE(error.find("smaller"), std::string::npos) << error;
  EXPECT_NE(error.find("lower, higher, none"), std::string::npos) << error;
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

TEST(Compare, ScatteredBaselineRunsRaiseTheNoiseFloor) {
  // A and A' have the same median by chance, but single runs scatter by about
  // 45% (scaled MAD): a 40% slower candidate median is not a regression on that evidence.
  std::vector<RunRecord> runs;
  const double base[] = {100, 55, 150, 100, 70}, again[] = {135, 100, 65, 100, 130}, cand[] = {140, 150, 130, 145, 135};
  for (int i = 0; i < 5; ++i) {
    runs.push_back(run(kRoleBaseline, i + 1, 500000, 10));
    runs.back().wall_ms = base[i];
    runs.push_back(run(kRoleCandidate, i + 1, 500000, 10));
    runs.back().wall_ms = cand[i];
    runs.push_back(run(kRoleBaselineAgain, i + 1, 500000, 10));
    runs.back().wall_ms = again[i];
  }
  Thresholds t = rules();
  t.rules.push_back({"wall_ms", MetricRule{compare::Direction::Lower, 0.10, 0}});
  Comparison c = analyze(runs, t, {});
  const auto* m = find(c, "wall_ms");
  ASSERT_NE(m, nullptr);
  EXPECT_NEAR(m->change, 0.4, 1e-9);
  EXPECT_GT(m->noise_floor, 0.4);
  EXPECT_EQ(m->verdict, compare::Verdict::Noisy);
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

// A candidate that never gives its memory back has no time to give it back:
// the metric cannot be compared, and the comparison says so instead of
// leaving it out without a word.
TEST(Compare, AMetricOnlyOneSideHasIsNamedInAWarning) {
  auto runs = rounds(500000, 500000, 10, 10);
  for (auto& r : runs) {
    if (r.role == kRoleCandidate)
      r.curve.push_back({"after.ms_to_90pct", Maybe{std::nullopt, "RSS never came down to 7.0 MB"}});
    else
      r.curve.push_back({"after.ms_to_90pct", Maybe{120.0, ""}});
  }
  Comparison c = analyze(runs, rules(), {});
  EXPECT_EQ(find(c, "after.ms_to_90pct"), nullptr);
  bool said = false;
  for (const auto& w : c.warnings)
    said = said || w == "w: the candidate has after.ms_to_90pct in no run (RSS never came down to 7.0 MB), the "
                        "baseline in 10: not compared";
  EXPECT_TRUE(said) << (c.warnings.empty() ? "no warnings" : c.warnings.front());
}

// Runs of idle-return's shape: the baseline never back within the ~3 s the
// run had after its mark, the candidate back in about 124 ms.
std::vector<RunRecord> never_against_back(bool never_is_baseline, double never_bound = 3011) {
  auto runs = rounds(500000, 500000, 10, 10);
  int i = 0;
  for (auto& r : runs) {
    const bool never = (r.role == kRoleCandidate) != never_is_baseline;
    Maybe m{std::nullopt, "RSS never came down to 7.0 MB"};
    if (never) m.above = never_bound + (i % 3);
    else m = Maybe{124.0 + (i % 5), ""};
    r.curve.push_back({"after.ms_to_90pct", m});
    ++i;
  }
  return runs;
}

// A time that never came within the run is more than the run had left, not a
// missing figure: compared, and ranked above every time below its bound.
TEST(Compare, NeverBackAgainstBackIsAnImprovement) {
  Comparison c = analyze(never_against_back(true), rules(), {});
  const MetricComparison* m = find(c, "after.ms_to_90pct");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->censored);
  EXPECT_TRUE(m->baseline.median_above);
  EXPECT_EQ(m->verdict, compare::Verdict::Improvement);
  EXPECT_NEAR(m->p, 1.0 / 3003, 1e-12);  // ten never against five back: the one extreme split
  const std::string table = comparison_table(c);
  EXPECT_NE(table.find("> 3010 ms (never)"), std::string::npos) << table;
  EXPECT_NE(table.find("never -> 126 ms"), std::string::npos) << table;
  const Json j = comparison_to_json(c, Json::object());
  EXPECT_EQ(j["workloads"][0]["metrics"].back()["test"], "gehan");
  EXPECT_EQ(j["workloads"][0]["metrics"].back()["baseline"]["median_above"], true);
}

TEST(Compare, BackAgainstNeverBackIsARegression) {
  CompareSettings all;
  all.gate.kind = Gate::Kind::All;  // "w" declares nothing: the default set has no time to give memory back
  Comparison c = analyze(never_against_back(false), rules(), all);
  const MetricComparison* m = find(c, "after.ms_to_90pct");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->verdict, compare::Verdict::Regression);
  EXPECT_TRUE(c.regressed());
  EXPECT_NE(comparison_table(c).find("126 ms -> never"), std::string::npos) << comparison_table(c);
}

// Runs that ended 60 ms after the mark cannot say whether 124 ms would have come.
TEST(Compare, RunsThatEndedTooSoonToTellAreNotCompared) {
  Comparison c = analyze(never_against_back(true, 60), rules(), {});
  EXPECT_EQ(find(c, "after.ms_to_90pct"), nullptr);
  bool said = false;
  for (const auto& w : c.warnings)
    said = said || w.find("w: the baseline's after.ms_to_90pct is more than 61 ms (its runs ended before it came), "
                          "not beyond the candidate's median 126 ms: too soon to tell, not compared") == 0;
  EXPECT_TRUE(said) << (c.warnings.empty() ? "no warnings" : c.warnings.front());
}

// The resolution is the smallest change that could have been called a
// regression: the largest of threshold, noise floor and absolute floor.
TEST(Compare, ResolutionIsTheLargestOfThresholdNoiseFloorAndAbsoluteFloor) {
  Comparison c = analyze(rounds(500000, 500000, 10, 10), rules(), {});
  const MetricComparison* peak = find(c, "peak_rss_kb");
  ASSERT_NE(peak, nullptr);
  ASSERT_TRUE(peak->resolution);
  EXPECT_DOUBLE_EQ(*peak->resolution, std::max({0.03, peak->noise_floor, 1024.0 / peak->baseline.median}));
  // An absolute floor larger than the threshold sets it.
  Thresholds t = rules();
  t.rules.insert(t.rules.begin(), {"peak_rss_kb", MetricRule{compare::Direction::Lower, 0.01, 100000}});
  c = analyze(rounds(500000, 500000, 10, 10), t, {});
  EXPECT_NEAR(*find(c, "peak_rss_kb")->resolution, 100000.0 / find(c, "peak_rss_kb")->baseline.median, 1e-12);
  // Too few runs for any p-value to pass: no resolution, and why.
  auto few = rounds(500000, 500000, 10, 10);
  few.resize(6);
  c = analyze(few, rules(), {});
  EXPECT_FALSE(find(c, "peak_rss_kb")->resolution);
  EXPECT_NE(find(c, "peak_rss_kb")->resolution_reason.find("no p-value can pass"), std::string::npos);
}

}  // namespace
}  // namespace mh
