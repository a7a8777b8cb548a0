// Step detection on synthetic series: a step of twice the threshold is found
// at its revision, a flat noisy series has none, a step into censored values
// is found by Gehan's test, and a step shorter than the minimum segment is not
// taken for one. Then the rule's error rates on histories resampled from
// recorded A/A runs of one pin, with and without an injected step.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>

#include "history/steps.h"

namespace mh::history {
namespace {

constexpr double kThreshold = 0.05;
const MetricRule kRule{compare::Direction::Lower, kThreshold, 0};

// `revisions` points of `runs` values each: `level(i)` times 1 + N(0, noise).
template <typename Level>
Series series_of(size_t revisions, size_t runs, double noise, Level level, uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0, noise);
  Series s{"peak_rss_kb", "w", "{}", "scav", "m", {}};
  for (size_t i = 0; i < revisions; ++i) {
    Point p{fmt::format("r{}", i), int64_t(i), {}, {}};
    for (size_t k = 0; k < runs; ++k) p.values.push_back({level(i) * (1 + n(rng)), false});
    s.points.push_back(p);
  }
  return s;
}

TEST(HistorySteps, StepOfTwiceTheThresholdIsFoundAtItsRevision) {
  auto s = series_of(24, 3, 0.01, [](size_t i) { return i < 15 ? 1000.0 : 1000.0 * (1 + 2 * kThreshold); });
  auto steps = find_steps(s, kRule, {});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].revision, "r15");
  EXPECT_EQ(steps[0].verdict, compare::Verdict::Regression);
  EXPECT_NEAR(steps[0].change, 2 * kThreshold, 0.02);
  EXPECT_LT(steps[0].p, 0.01);
  EXPECT_LT(steps[0].ci.lo, steps[0].change);
  EXPECT_GT(steps[0].ci.hi, steps[0].change);
}

TEST(HistorySteps, UpThenDownAreTwoSteps) {
  auto s = series_of(20, 3, 0.01, [](size_t i) { return i >= 6 && i < 11 ? 1100.0 : 125.0; });
  auto steps = find_steps(s, kRule, {});
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].revision, "r6");
  EXPECT_EQ(steps[0].verdict, compare::Verdict::Regression);
  EXPECT_EQ(steps[1].revision, "r11");
  EXPECT_EQ(steps[1].verdict, compare::Verdict::Improvement);
}

// Under an L1 cost the cut of the whole series cannot see a short excursion
// (the medians either side do not move): the seeded intervals must.
TEST(HistorySteps, TwoStepsAFewRevisionsApartInALongSeriesAreBothFound) {
  auto s = series_of(400, 3, 0.01, [](size_t i) { return i >= 200 && i < 205 ? 1200.0 : 1000.0; });
  auto steps = find_steps(s, kRule, {});
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].revision, "r200");
  EXPECT_EQ(steps[0].verdict, compare::Verdict::Regression);
  EXPECT_EQ(steps[1].revision, "r205");
  EXPECT_EQ(steps[1].verdict, compare::Verdict::Improvement);
}

TEST(HistorySteps, ALongFlatSeriesHasNone) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto s = series_of(3000, 3, 0.02, [](size_t) { return 1000.0; }, seed);
    EXPECT_TRUE(find_steps(s, kRule, {}).empty()) << "seed " << seed;
  }
}

TEST(HistorySteps, FlatNoisySeriesHasNone) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto s = series_of(30, 3, 0.02, [](size_t) { return 1000.0; }, seed);
    EXPECT_TRUE(find_steps(s, kRule, {}).empty()) << "seed " << seed;
  }
}

TEST(HistorySteps, StepIntoCensoredValuesIsFoundByGehansTest) {
  auto s = series_of(12, 3, 0.01, [](size_t) { return 120.0; });
  for (size_t i = 6; i < 12; ++i)
    for (auto& v : s.points[i].values) v = {3000, true};  // never came within the run's 3 s
  auto steps = find_steps(s, kRule, {});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].revision, "r6");
  EXPECT_TRUE(steps[0].censored);
  EXPECT_EQ(steps[0].verdict, compare::Verdict::Regression);
}

TEST(HistorySteps, OneOddRevisionIsNoStepUnderTheMinimumSegment) {
  auto s = series_of(12, 3, 0.01, [](size_t i) { return i == 5 ? 2000.0 : 1000.0; });
  EXPECT_TRUE(find_steps(s, kRule, {}).empty());
}

TEST(HistorySteps, ChangeWithinTheAbsoluteFloorIsNoStep) {
  auto s = series_of(12, 3, 0.001, [](size_t i) { return i < 6 ? 1000.0 : 1200.0; });
  EXPECT_TRUE(find_steps(s, {compare::Direction::Lower, kThreshold, 500}, {}).empty());
  EXPECT_EQ(find_steps(s, kRule, {}).size(), 1u);
}

// The runs of one pin recorded A against A (fixtures/aa-rounds.json, whose
// command is in the file: 120 runs of scav a metric), with the shipped rule.
struct Recorded {
  std::string workload, metric;
  MetricRule rule;
  std::vector<double> values;
};

std::vector<Recorded> recorded_runs() {
  std::string error;
  auto t = load_thresholds(std::string(MEMHARNESS_SOURCE_DIR_FOR_TESTS) + "/ci/thresholds.json", error);
  EXPECT_TRUE(t) << error;
  std::ifstream in(std::string(FIXTURE_DIR) + "/aa-rounds.json");
  const Json j = Json::parse(in, nullptr, false);
  std::vector<Recorded> out;
  if (!t || j.is_discarded()) return out;
  for (const auto& [workload, metrics] : j["workloads"].items())
    for (const auto& [name, m] : metrics.items()) {
      Recorded r{workload, name, t->rule_for(name, m["better"].get<std::string>()), {}};
      for (const char* role : {"baseline", "candidate", "baseline-again"})
        for (double v : m[role].get<std::vector<double>>()) r.values.push_back(v);
      if (r.rule.direction != compare::Direction::None) out.push_back(std::move(r));
    }
  return out;
}

constexpr size_t kRevisions = 30, kRunsEach = 3, kHistories = 100;

// 30 revisions of 3 runs drawn from the recorded ones; from `step_at` on,
// worse by `factor` (1: no step).
Series resampled(const Recorded& r, std::mt19937_64& rng, size_t step_at, double factor) {
  std::uniform_int_distribution<size_t> pick(0, r.values.size() - 1);
  const bool higher_is_worse = r.rule.direction == compare::Direction::Lower;
  Series s{r.metric, r.workload, "{}", "scav", "m", {}};
  for (size_t i = 0; i < kRevisions; ++i) {
    Point p{fmt::format("r{}", i), int64_t(i), {}, {}};
    for (size_t k = 0; k < kRunsEach; ++k) {
      const double v = r.values[pick(rng)];
      p.values.push_back({i >= step_at ? (higher_is_worse ? v * factor : v / factor) : v, false});
    }
    s.points.push_back(p);
  }
  return s;
}

double median_of(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The scatter of single runs including their tails: (p90 - p10) / 2.563 over
// the median (2.563 standard deviations for normal scatter). A series whose
// runs are mostly alike but now and then far off (a purge that lands in the
// run or not) has a small median absolute deviation and a large tail.
double tail_spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto at = [&](double q) { return v[size_t(q * double(v.size() - 1))]; };
  const double median = std::fabs(median_of(v));
  return median > 0 ? (at(0.9) - at(0.1)) / 2.563 / median : 0;
}

TEST(HistorySteps, RecordedAAgainstAHistoriesHaveAFalseStepInAtMostFivePercent) {
  const auto recorded = recorded_runs();
  ASSERT_FALSE(recorded.empty());
  std::mt19937_64 rng(2026);
  size_t worst = 0;
  for (const auto& r : recorded) {
    size_t false_steps = 0;
    for (size_t h = 0; h < kHistories; ++h)
      false_steps += !find_steps(resampled(r, rng, kRevisions, 1), r.rule, {2, 0.05, 0}).empty();
    worst = std::max(worst, false_steps);
    EXPECT_LE(false_steps, kHistories / 20) << r.workload << " " << r.metric;
    fmt::print("{} {}: a false step in {} of {} histories\n", r.workload, r.metric, false_steps, kHistories);
  }
  fmt::print("{} series, the worst with a false step in {} of {} histories\n", recorded.size(), worst, kHistories);
}

TEST(HistorySteps, StepOfOneAndAHalfThresholdsInRecordedRunsIsFoundAtItsRevisionWhereRunsScatterLess) {
  const auto recorded = recorded_runs();
  ASSERT_FALSE(recorded.empty());
  std::mt19937_64 rng(2027);
  std::uniform_int_distribution<size_t> where(2, kRevisions - 2);
  size_t tried = 0, least = kHistories;
  for (const auto& r : recorded) {
    const double factor = 1 + 1.5 * r.rule.threshold;
    // A step within the absolute floor, or within the scatter of single runs
    // (the noise floor), is no change by the rule's own terms, as in a comparison.
    const double spread = compare::relative_spread(r.values);
    if (std::fabs(median_of(r.values) * (factor - 1)) <= r.rule.min_delta || factor - 1 <= spread) {
      fmt::print("{} {}: a step of {:.1f}% is within the floor (runs scatter {:.1f}%)\n", r.workload, r.metric,
                 100 * (factor - 1), 100 * spread);
      continue;
    }
    ++tried;
    size_t found = 0;
    for (size_t h = 0; h < kHistories; ++h) {
      const size_t at = where(rng);
      for (const auto& st : find_steps(resampled(r, rng, at, factor), r.rule, {2, 0.05, 0}))
        found += st.index == at && st.verdict == compare::Verdict::Regression;
    }
    // Where single runs scatter by more than a third of the step, tails
    // included, the step is found less often (cpu_ms, the after.* times, runs
    // with a bimodal figure: 15 to 89 in 100 here); they are printed, not
    // held to this.
    if (factor - 1 >= 3 * std::max(spread, tail_spread(r.values))) {
      least = std::min(least, found);
      EXPECT_GE(found, kHistories * 85 / 100) << r.workload << " " << r.metric;
    }
    fmt::print("{} {}: a step of {:.1f}% found at its revision in {} of {} histories (runs scatter {:.1f}%, "
               "{:.1f}% with their tails)\n", r.workload, r.metric, 100 * (factor - 1), found, kHistories,
               100 * spread, 100 * tail_spread(r.values));
  }
  fmt::print("{} series with a step beyond the floor; where the step is 3 times the runs' scatter (tails included) "
             "or more, the least found in {} of {} histories\n", tried, least, kHistories);
}

}  // namespace
}  // namespace mh::history
