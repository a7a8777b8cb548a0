// Step detection on synthetic series: a step of twice the threshold is found
// at its revision, a flat noisy series has none, a step into censored values
// is found by Gehan's test, and a step shorter than the minimum segment is not
// taken for one.
#include <gtest/gtest.h>

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
    Point p{"r" + std::to_string(i), int64_t(i), {}};
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

}  // namespace
}  // namespace mh::history
