// The growth estimator (core/growth.h) on hand-made series: exact Theil-Sen and
// Mann-Kendall figures on tiny inputs, and with fixed seeds the interval's
// coverage of a known slope under AR(1) noise and the false-alarm rate of
// "growing" on flat AR(1) series.
#include "core/growth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>

namespace mh::growth {
namespace {

std::vector<Point> series(std::initializer_list<double> values) {
  std::vector<Point> out;
  double t = 0;
  for (double v : values) out.push_back({t++, v});
  return out;
}

TEST(TheilSen, IsTheMedianOfThePairwiseSlopes) {
  EXPECT_DOUBLE_EQ(theil_sen_slope(series({0, 1, 4})), 2);           // slopes 1, 4/2, 3
  EXPECT_DOUBLE_EQ(theil_sen_slope(series({0, 1, 4, 3})), 1);        // -1 1 1 1 2 3: the middle two
  EXPECT_DOUBLE_EQ(theil_sen_slope(series({5, 5, 5, 5, 100})), 0);   // one outlier moves nothing
  EXPECT_DOUBLE_EQ(theil_sen_slope({{0, 0}, {0, 7}, {2, 4}}), 0.25);  // the pair at one time is left out: 2, -1.5 -> 0.25
  EXPECT_DOUBLE_EQ(theil_sen_slope({{3, 1}, {1, 0}, {2, 5}}), 0.5);  // sorted by time first: 5, 0.5, -4
}

TEST(MannKendall, CountsPairsAndTiesOnATinySeries) {
  const Trend up = trend(series({1, 2, 3, 4}));
  EXPECT_EQ(up.n, 4u);
  EXPECT_EQ(up.s, 6);                       // every pair rises
  EXPECT_NEAR(up.var_s / up.var_factor, 4.0 * 3 * 13 / 18, 1e-12);
  EXPECT_DOUBLE_EQ(up.slope, 1);
  const Trend ties = trend(series({1, 1, 2, 2, 3}));
  EXPECT_EQ(ties.s, 8);                     // 10 pairs, 2 tied
  // n(n-1)(2n+5)/18 less 2 * 2*1*9/18 for the two pairs of ties.
  EXPECT_NEAR(ties.var_s / ties.var_factor, (5.0 * 4 * 15 - 2 * 18) / 18, 1e-12);
}

TEST(MannKendall, AConstantSeriesIsFlatWithPOne) {
  const Trend t = trend(series({7, 7, 7, 7, 7, 7, 7, 7}));
  EXPECT_EQ(t.s, 0);
  EXPECT_EQ(t.p, 1);
  EXPECT_EQ(t.slope, 0);
  EXPECT_EQ(direction(t), Direction::Flat);
}

TEST(Downsample, AveragesBinsOfConsecutivePointsInTimeOrder) {
  std::vector<Point> p;
  for (int i = 9; i >= 0; --i) p.push_back({double(i), double(i * i)});
  const auto d = downsample(p, 5);
  ASSERT_EQ(d.size(), 5u);
  EXPECT_DOUBLE_EQ(d[0].t, 0.5);
  EXPECT_DOUBLE_EQ(d[0].v, 0.5);    // (0 + 1) / 2
  EXPECT_DOUBLE_EQ(d[4].v, 72.5);   // (64 + 81) / 2
  EXPECT_EQ(downsample(p, 20).size(), 10u);  // short enough: kept
  std::vector<Point> many(5000, Point{0, 1});
  for (size_t i = 0; i < many.size(); ++i) many[i].t = double(i);
  EXPECT_EQ(trend(many).n, kMaxPoints);
}

// An AR(1) series: x_i = phi x_{i-1} + e_i, e_i normal with sd `noise`,
// started from its stationary distribution, plus slope * t.
std::vector<Point> ar1(std::mt19937_64& rng, size_t n, double dt, double slope, double phi, double noise) {
  std::normal_distribution<double> e(0, noise);
  std::vector<Point> out;
  double x = e(rng) / std::sqrt(1 - phi * phi);
  for (size_t i = 0; i < n; ++i) {
    if (i) x = phi * x + e(rng);
    out.push_back({double(i) * dt, slope * double(i) * dt + x});
  }
  return out;
}

TEST(HamedRao, LeavesWhiteNoiseAloneAndWidensCorrelatedNoise) {
  std::mt19937_64 rng(7);
  std::vector<double> white, red;
  for (const auto& p : ar1(rng, 500, 1, 0, 0, 1)) white.push_back(p.v);
  for (const auto& p : ar1(rng, 500, 1, 0, 0.8, 1)) red.push_back(p.v);
  EXPECT_LT(hamed_rao_factor(white), 1.5);
  EXPECT_GT(hamed_rao_factor(red), 3);  // about (1 + phi) / (1 - phi) = 9 for the mean; less for S
}

// The Wilson 95% interval of k successes in n.
std::pair<double, double> wilson(int k, int n) {
  const double z = 1.959963984540054, p = double(k) / n, d = 1 + z * z / n;
  const double mid = (p + z * z / (2 * n)) / d, half = z * std::sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / d;
  return {std::max(0.0, mid - half), std::min(1.0, mid + half)};
}

struct Case {
  size_t n;
  double phi;
};
// Short and long (downsampled) series, white to strongly correlated noise.
constexpr Case kCases[] = {{120, 0}, {300, 0.5}, {300, 0.9}, {3000, 0.95}};
constexpr int kSeries = 200;

// A known slope of 0.5 per unit of time under noise of sd 1: Sen's interval,
// from the corrected variance, covers it in at least 88% of the series
// (nominal 95%; the binomial 95% band of 200 series at 95% is about 91-98%).
TEST(GrowthEstimator, IntervalCoversAKnownSlopeUnderAr1Noise) {
  std::mt19937_64 rng(20261206);
  for (const Case& c : kCases) {
    int covered = 0, growing = 0;
    const double dt = 10.0 / double(c.n), slope = 0.5;
    for (int i = 0; i < kSeries; ++i) {
      const Trend t = trend(ar1(rng, c.n, dt, slope, c.phi, 0.3));
      covered += t.lo <= slope && slope <= t.hi;
      growing += direction(t) == Direction::Growing;
    }
    const auto [lo, hi] = wilson(covered, kSeries);
    std::cout << "n " << c.n << " phi " << c.phi << ": covered " << covered << "/" << kSeries << " [" << lo << "-"
              << hi << "], called growing " << growing << "\n";
    EXPECT_GE(covered, int(0.88 * kSeries)) << "n " << c.n << " phi " << c.phi;
  }
}

// Flat series: "growing" (p < 0.05 and the interval above 0) in at most 5% of
// 200 series for each kind of noise.
TEST(GrowthEstimator, FalseAlarmsOnFlatAr1SeriesAtMostFivePercent) {
  std::mt19937_64 rng(1206);
  int all = 0, total = 0;
  for (const Case& c : kCases) {
    int growing = 0, any = 0;
    for (int i = 0; i < kSeries; ++i) {
      const Trend t = trend(ar1(rng, c.n, 10.0 / double(c.n), 0, c.phi, 1));
      growing += direction(t) == Direction::Growing;
      any += t.p < kAlpha;
    }
    const auto [lo, hi] = wilson(growing, kSeries);
    std::cout << "n " << c.n << " phi " << c.phi << ": growing " << growing << "/" << kSeries << " [" << lo << "-"
              << hi << "], p < 0.05 either way " << any << "\n";
    EXPECT_LE(growing, kSeries / 20) << "n " << c.n << " phi " << c.phi;
    all += growing;
    total += kSeries;
  }
  const auto [lo, hi] = wilson(all, total);
  std::cout << "all: growing " << all << "/" << total << " [" << lo << "-" << hi << "]\n";
}

// Without the correction the same correlated series would be called growing
// far more often: the test above is one that the plain Mann-Kendall fails.
TEST(GrowthEstimator, PlainMannKendallWouldFalseAlarmOnCorrelatedSeries) {
  std::mt19937_64 rng(1206);
  int plain = 0;
  for (int i = 0; i < kSeries; ++i) {
    const Trend t = trend(ar1(rng, 300, 10.0 / 300, 0, 0.9, 1));
    const double z = t.s / std::sqrt(t.var_s / t.var_factor);
    plain += z > 1.96;
  }
  EXPECT_GT(plain, kSeries / 10);
}

}  // namespace
}  // namespace mh::growth
