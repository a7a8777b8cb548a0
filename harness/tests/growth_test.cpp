// The growth estimator (core/growth.h) on hand-made series: exact Theil-Sen,
// Mann-Kendall and block figures on tiny inputs, and with fixed seeds the
// interval's coverage of a known slope under AR(1) noise and the false-alarm
// rate of "growing" on flat AR(1) series.
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
  EXPECT_NEAR(up.var_s, 4.0 * 3 * 13 / 18, 1e-12);
  EXPECT_DOUBLE_EQ(up.slope, 1);
  const Trend ties = trend(series({1, 1, 2, 2, 3}));
  EXPECT_EQ(ties.s, 8);                     // 10 pairs, 2 tied
  // n(n-1)(2n+5)/18 less 2 * 2*1*9/18 for the two pairs of ties.
  EXPECT_NEAR(ties.var_s, (5.0 * 4 * 15 - 2 * 18) / 18, 1e-12);
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

TEST(Blocks, FirstLagInsideTheBandAndTheBlockLength) {
  // Alternating values: lag 1 is -1, already below the band.
  EXPECT_EQ(first_uncorrelated_lag({1, -1, 1, -1, 1, -1, 1, -1}), 1u);
  // Runs of four: lag 1 is (15 - 2*3)/16 = 0.5625, above 2/sqrt(16) = 0.5;
  // lag 2 is (14 - 2*6)/16 = 0.125, below it.
  EXPECT_EQ(first_uncorrelated_lag({1, 1, 1, 1, -1, -1, -1, -1, 1, 1, 1, 1, -1, -1, -1, -1}), 2u);
  EXPECT_DOUBLE_EQ(autocorrelation({1, 1, 1, 1, -1, -1, -1, -1, 1, 1, 1, 1, -1, -1, -1, -1}, 1), 0.5625);
  EXPECT_DOUBLE_EQ(autocorrelation({3, 3, 3}, 1), 0);
  EXPECT_EQ(block_length(1, 1000), 1u);
  EXPECT_EQ(block_length(4, 1000), 12u);  // kBlockFactor 3
  EXPECT_EQ(block_length(40, 300), 30u);  // at least kMinBlocks blocks
  std::mt19937_64 rng(7);
  std::vector<double> white, red;
  for (const auto& p : ar1(rng, 500, 1, 0, 0, 1)) white.push_back(p.v);
  for (const auto& p : ar1(rng, 500, 1, 0, 0.8, 1)) red.push_back(p.v);
  EXPECT_LE(first_uncorrelated_lag(white), 2u);
  EXPECT_GE(first_uncorrelated_lag(red), 8u);  // 0.8^k below 0.089 from k = 11, less the estimate's bias
}

TEST(Blocks, ACorrelatedSeriesIsTestedOnItsBlockMeans) {
  std::mt19937_64 rng(11);
  const Trend t = trend(ar1(rng, 600, 1, 0, 0.9, 1));
  EXPECT_GT(t.block, 1u);
  EXPECT_EQ(t.blocks, 600 / t.block);
  EXPECT_GE(t.blocks, kMinBlocks);
  EXPECT_NEAR(t.var_s, double(t.blocks) * double(t.blocks - 1) * double(2 * t.blocks + 5) / 18, 1e-9);
}

// P(X <= k) for X binomial(n, p).
double binomial_cdf(int k, int n, double p) {
  double sum = 0;
  for (int i = 0; i <= k; ++i)
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + i * std::log(p) +
                    (n - i) * std::log1p(-p));
  return sum;
}

// The Clopper-Pearson (exact) 95% interval of k successes in n, by bisection.
std::pair<double, double> clopper_pearson(int k, int n) {
  auto solve = [n](int at, double target) {  // the p where P(X <= at) falls to target
    double lo = 0, hi = 1;
    for (int i = 0; i < 60; ++i) ((binomial_cdf(at, n, (lo + hi) / 2) > target) ? lo : hi) = (lo + hi) / 2;
    return (lo + hi) / 2;
  };
  const double lower = k == 0 ? 0 : solve(k - 1, 0.975);
  const double upper = k == n ? 1 : solve(k, 0.025);
  return {lower, upper};
}

TEST(ClopperPearson, KnownIntervals) {
  // R: binom.test(5, 200)$conf.int = 0.00817 0.05737; binom.test(0, 20) = 0 0.16843
  EXPECT_NEAR(clopper_pearson(5, 200).first, 0.00817, 5e-5);
  EXPECT_NEAR(clopper_pearson(5, 200).second, 0.05737, 5e-5);
  EXPECT_NEAR(clopper_pearson(0, 20).second, 0.16843, 5e-5);
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
    const auto [lo, hi] = clopper_pearson(covered, kSeries);
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
    const auto [lo, hi] = clopper_pearson(growing, kSeries);
    std::cout << "n " << c.n << " phi " << c.phi << ": growing " << growing << "/" << kSeries << " [" << lo << "-"
              << hi << "], p < 0.05 either way " << any << "\n";
    EXPECT_LE(growing, kSeries / 20) << "n " << c.n << " phi " << c.phi;
    all += growing;
    total += kSeries;
  }
  const auto [lo, hi] = clopper_pearson(all, total);
  std::cout << "all: growing " << all << "/" << total << " [" << lo << "-" << hi << "]\n";
}

// Flat series as long and as correlated as flat-churn's under the harness:
// 1000 points (its 6000 samples of a minute averaged in bins of 6), the lag-1
// autocorrelation its live heap and the memory outside it had under glibc
// (medians 0.67 and 0.71 over 20 runs with seeds 1-20: 0.70), and 0.86, what
// the memory outside it had under scav (docs/leak-or-allocator.md).
TEST(GrowthEstimator, FalseAlarmsAtTheAutocorrelationOfRealRuns) {
  std::mt19937_64 rng(61206);
  for (const double phi : {0.70, 0.86}) {
    int growing = 0;
    for (int i = 0; i < kSeries; ++i) growing += direction(trend(ar1(rng, 1000, 0.06, 0, phi, 1))) == Direction::Growing;
    const auto [lo, hi] = clopper_pearson(growing, kSeries);
    std::cout << "n 1000 phi " << phi << ": growing " << growing << "/" << kSeries << " [" << lo << "-" << hi << "]\n";
    EXPECT_LE(growing, kSeries / 20) << "phi " << phi;
  }
}

// Without the blocks the same correlated series would be called growing far
// more often: the test above is one that the plain Mann-Kendall fails.
TEST(GrowthEstimator, PlainMannKendallWouldFalseAlarmOnCorrelatedSeries) {
  std::mt19937_64 rng(1206);
  int plain = 0;
  for (int i = 0; i < kSeries; ++i) {
    std::vector<Point> p = ar1(rng, 300, 10.0 / 300, 0, 0.9, 1);
    double s = 0;
    for (size_t a = 0; a < p.size(); ++a)
      for (size_t b = a + 1; b < p.size(); ++b) s += (p[b].v > p[a].v) - (p[b].v < p[a].v);
    const double n = double(p.size());
    plain += (s - 1) / std::sqrt(n * (n - 1) * (2 * n + 5) / 18) > 1.96;
  }
  EXPECT_GT(plain, kSeries / 10);
}

}  // namespace
}  // namespace mh::growth
