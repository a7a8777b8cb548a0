// Comparison statistics on hand-made inputs. Expected values were worked out by
// hand or, where noted, from an independent Python script (exact p-values by
// enumerating every split of the ranks; mt19937_64 written out from the
// reference algorithm and checked against the standard's 10000th output).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "compare/compare_stats.h"

namespace mh::compare {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- side_stats ----

// Within rounds: differences of logs 0.01..0.08, all positive and distinct. The
// signed-rank statistic is its largest (36), whose two-sided exact p is 2/2^8;
// the estimate is the median Walsh average (0.045); at 95% the interval leaves
// out the 3 smallest and largest of the 36 Walsh averages (P(W+ <= 3) = 5/256 <=
// 0.025 < P(W+ <= 4) = 7/256), so it runs from the 4th (0.02) to the 33rd (0.07).
TEST(CompareStats, PairedChangeOfRoundsIsTheSignedRankEstimateAndInterval) {
  std::vector<double> base, cand;
  for (int k = 1; k <= 8; ++k) {
    base.push_back(100.0 * k);  // drift between rounds: it cancels within each
    cand.push_back(100.0 * k * std::exp(0.01 * k));
  }
  auto p = paired_change(base, cand, 0.95);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->rounds, 8u);
  EXPECT_NEAR(p->change, std::expm1(0.045), 1e-12);
  ASSERT_TRUE(p->bounded);
  EXPECT_NEAR(p->lo, std::expm1(0.02), 1e-12);
  EXPECT_NEAR(p->hi, std::expm1(0.07), 1e-12);
  EXPECT_NEAR(p->p, 2.0 / 256, 1e-12);
}

// Rounds that move together by 2x while the candidate is 5% slower in each: the
// medians of the sides cannot tell, the rounds can.
TEST(CompareStats, PairedChangeSeesThroughDriftBetweenRounds) {
  const std::vector<double> base = {100, 180, 95, 170, 102, 175, 98, 182, 99, 178};
  std::vector<double> cand;
  for (size_t k = 0; k < base.size(); ++k) cand.push_back(base[k] * (1.05 + 0.001 * double(k % 3)));
  EXPECT_GT(mann_whitney_p(base, cand), 0.05);
  auto p = paired_change(base, cand, 0.95);
  ASSERT_TRUE(p.has_value() && p->bounded);
  EXPECT_GT(p->lo, 0.049);
  EXPECT_LT(p->hi, 0.053);
  EXPECT_LT(p->p, 0.01);
}

// 3000 rounds, d = 0.05 + 0.001 (k mod 11 - 5): the median of the ratios (the
// sign test's estimate, not 4.5 million Walsh averages), an interval inside the
// spread of d, and a p that rejects.
TEST(CompareStats, PairedChangeOfManyRoundsIsTheSignTestEstimate) {
  std::vector<double> base, cand;
  for (int k = 0; k < 3000; ++k) {
    base.push_back(10 + k % 7);
    cand.push_back(base.back() * std::exp(0.05 + 0.001 * (k % 11 - 5)));
  }
  auto p = paired_change(base, cand, 0.95);
  ASSERT_TRUE(p.has_value() && p->bounded);
  EXPECT_EQ(p->rounds, 3000u);
  EXPECT_NEAR(p->change, std::expm1(0.05), 1e-9);
  EXPECT_GE(p->lo, std::expm1(0.045) - 1e-12);
  EXPECT_LE(p->hi, std::expm1(0.055) + 1e-12);
  EXPECT_LT(p->p, 1e-9);
}

// Five rounds cannot reach 95% (the two-sided exact p of five like signs is
// 2/32): the estimate comes without an interval. Fewer than 2 rounds, or a value
// of 0, give none.
TEST(CompareStats, PairedChangeWithTooFewRoundsHasNoInterval) {
  auto p = paired_change({10, 20, 30, 40, 50}, {11, 22.2, 33.6, 45.2, 57}, 0.95);
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->bounded);
  EXPECT_NEAR(p->p, 2.0 / 32, 1e-12);
  EXPECT_FALSE(paired_change({10}, {11}, 0.95).has_value());
  EXPECT_FALSE(paired_change({10, 0, 30}, {11, 22, 33}, 0.95).has_value());
  // No change at all: every difference 0, nothing to rank.
  auto same = paired_change({10, 20, 30}, {10, 20, 30}, 0.95);
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->change, 0);
  EXPECT_EQ(same->p, 1);
}

TEST(CompareStats, SideStatsOfOddCount) {
  auto s = side_stats({4, 1, 100, 3, 2});  // sorted 1 2 3 4 100
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mad, 1);  // |x - 3| = 2 1 0 1 97 -> median 1: the outlier does not move it
  EXPECT_EQ(s.n, 5u);
  EXPECT_EQ(s.values, (std::vector<double>{4, 1, 100, 3, 2}));  // a copy, in the given order
}

TEST(CompareStats, SideStatsOfEvenCountUsesTheMiddleTwo) {
  auto s = side_stats({10, 2, 4, 8});  // median (4 + 8) / 2 = 6; |x - 6| = 4 4 2 2 -> MAD 3
  EXPECT_DOUBLE_EQ(s.median, 6);
  EXPECT_DOUBLE_EQ(s.mad, 3);
  EXPECT_EQ(s.n, 4u);
}

TEST(CompareStats, SideStatsOfNothingIsAllZero) {
  auto s = side_stats({});
  EXPECT_EQ(s.n, 0u);
  EXPECT_DOUBLE_EQ(s.median, 0);
  EXPECT_DOUBLE_EQ(s.min, 0);
  EXPECT_DOUBLE_EQ(s.max, 0);
  EXPECT_DOUBLE_EQ(s.mad, 0);
  EXPECT_TRUE(s.values.empty());
}

// ---- relative_change ----

TEST(CompareStats, RelativeChangeIsAFractionOfTheBaseline) {
  EXPECT_DOUBLE_EQ(relative_change(100, 110), 0.10);
  EXPECT_DOUBLE_EQ(relative_change(200, 150), -0.25);
}

TEST(CompareStats, RelativeChangeOfANegativeBaselineKeepsTheSignOfTheMove) {
  EXPECT_DOUBLE_EQ(relative_change(-10, -5), 0.5);  // went up by half of |baseline|
  EXPECT_DOUBLE_EQ(relative_change(-10, -15), -0.5);
}

TEST(CompareStats, RelativeChangeFromZero) {
  EXPECT_EQ(relative_change(0, 0), 0);
  EXPECT_EQ(relative_change(0, 3), kInf);
  EXPECT_EQ(relative_change(0, -3), -kInf);
}

// ---- mann_whitney_p ----

TEST(CompareStats, MannWhitneyExactForCompleteSeparation) {
  // U = 0 is the single most extreme of C(10, 5) = 252 orderings, on each side.
  EXPECT_NEAR(mann_whitney_p({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}), 2.0 / 252, 1e-12);
}

TEST(CompareStats, MannWhitneyExactWithOneCrossing) {
  // U = 1 (only 5 > 4); orderings of sizes 4 and 3 with U <= 1: U = 0 and U = 1,
  // one each, out of C(7, 3) = 35, so p = 2 * 2 / 35.
  EXPECT_NEAR(mann_whitney_p({1, 2, 3, 5}, {4, 6, 7}), 4.0 / 35, 1e-12);
}

TEST(CompareStats, MannWhitneyExactInTheMiddleOfTheDistribution) {
  // U = 6 of a mean of 8; 24 of the 70 orderings have U <= 6 (enumerated in Python).
  EXPECT_NEAR(mann_whitney_p({1, 3, 5, 7}, {2, 4, 6, 8}), 24.0 / 35, 1e-12);
}

TEST(CompareStats, MannWhitneyOfIdenticalSamplesIsOne) {
  EXPECT_DOUBLE_EQ(mann_whitney_p({1, 2, 3, 4}, {1, 2, 3, 4}), 1);  // ties: normal path, U at its mean
  EXPECT_DOUBLE_EQ(mann_whitney_p({10}, {20}), 1);                   // exact: both orderings equally likely
}

TEST(CompareStats, MannWhitneyOfAllEqualValuesIsOne) {
  EXPECT_DOUBLE_EQ(mann_whitney_p({5, 5, 5}, {5, 5}), 1);  // variance 0 after the tie correction
}

TEST(CompareStats, MannWhitneyOfAnEmptySideIsOne) {
  EXPECT_DOUBLE_EQ(mann_whitney_p({}, {1, 2}), 1);
  EXPECT_DOUBLE_EQ(mann_whitney_p({1, 2}, {}), 1);
}

TEST(CompareStats, MannWhitneyTiesUseTheCorrectedNormalApproximation) {
  // a = {1, 2, 2, 3}, b = {2, 3, 4, 5}. Average ranks: 1 -> 1, 2 -> 3, 3 -> 5.5,
  // 4 -> 7, 5 -> 8. R_a = 1 + 3 + 3 + 5.5 = 12.5, U = 12.5 - 10 = 2.5, mean 8.
  // Ties: one run of 3 and one of 2, sum(t^3 - t) = 24 + 6 = 30.
  // var = 16 / 12 * (9 - 30 / 56) = 11.2857, z = (5.5 - 0.5) / sqrt(var) = 1.48835.
  const double var = 16.0 / 12 * (9 - 30.0 / 56);
  const double z = 5.0 / std::sqrt(var);
  const double expected = std::erfc(z / std::sqrt(2.0));
  EXPECT_NEAR(expected, 0.136658, 1e-6);  // the hand computation, as a number
  EXPECT_NEAR(mann_whitney_p({1, 2, 2, 3}, {2, 3, 4, 5}), expected, 1e-12);
}

TEST(CompareStats, MannWhitneyLargeSamplesUseTheNormalApproximation) {
  // 11 vs 11 distinct values, completely separated: U = 0, mean 60.5,
  // var = 121 * 23 / 12, z = 60 / sqrt(var) = 3.9399, p = 8.1515e-5. The exact
  // p would be 2 / C(22, 11) = 2.9e-6, so this also checks the path taken.
  std::vector<double> a, b;
  for (int i = 1; i <= 11; ++i) a.push_back(i);
  for (int i = 12; i <= 22; ++i) b.push_back(i);
  EXPECT_NEAR(mann_whitney_p(a, b), 8.151536127743262e-05, 1e-12);
}

TEST(CompareStats, MannWhitneyTwentyValuesIsStillExact) {
  // 10 vs 10 separated: exact p = 2 / C(20, 10) = 2 / 184756 = 1.0825e-5; the
  // normal approximation would give 1.83e-4 (z = 49.5 / sqrt(175)).
  std::vector<double> a, b;
  for (int i = 1; i <= 10; ++i) a.push_back(i);
  for (int i = 11; i <= 20; ++i) b.push_back(i);
  EXPECT_NEAR(mann_whitney_p(a, b), 2.0 / 184756, 1e-12);
}

TEST(CompareStats, MannWhitneyIsSymmetric) {
  const std::vector<double> a{1, 2, 3, 5}, b{4, 6, 7};                   // exact path
  const std::vector<double> c{1, 2, 2, 3}, d{2, 3, 4, 5};                // tie path
  EXPECT_DOUBLE_EQ(mann_whitney_p(a, b), mann_whitney_p(b, a));
  EXPECT_DOUBLE_EQ(mann_whitney_p(c, d), mann_whitney_p(d, c));
}

// ---- bootstrap_change_ci ----

const std::vector<double> kBase{100, 98, 103, 101, 99};
const std::vector<double> kCand{104, 107, 102, 106, 105};

TEST(CompareStats, BootstrapIsDeterministicForASeed) {
  auto first = bootstrap_change_ci(kBase, kCand, 0.95, 500, 42);
  auto again = bootstrap_change_ci(kBase, kCand, 0.95, 500, 42);
  EXPECT_EQ(first.lo, again.lo);
  EXPECT_EQ(first.hi, again.hi);
}

TEST(CompareStats, BootstrapMatchesAnIndependentImplementation) {
  // Same algorithm written separately in Python (mt19937_64 from its reference
  // description, index = draw % n, base draws then candidate draws per resample,
  // type-7 percentiles). Even sizes and uneven values give ~100 distinct
  // resampled changes, and 90% of 200 puts both ends between two of them, so
  // a different draw or percentile rule shows. A mismatch means results are no
  // longer reproducible across machines.
  const std::vector<double> base{100.0, 97.5, 103.25, 101.0, 98.75, 102.5};
  const std::vector<double> cand{104.5, 108.0, 101.75, 106.25, 105.0, 103.5};
  auto ci = bootstrap_change_ci(base, cand, 0.90, 200, 42);
  EXPECT_NEAR(ci.lo, 0.017192724875651703, 1e-12);
  EXPECT_NEAR(ci.hi, 0.0670886075949367, 1e-12);
  auto other_seed = bootstrap_change_ci(base, cand, 0.90, 200, 7);
  EXPECT_NEAR(other_seed.lo, 0.019454578021912406, 1e-12);
  EXPECT_NEAR(other_seed.hi, 0.06608349760630804, 1e-12);
}

TEST(CompareStats, BootstrapOfSeparatedSamplesHoldsThePointEstimate) {
  const double point = relative_change(100, 105);  // medians of kBase and kCand
  auto ci = bootstrap_change_ci(kBase, kCand, 0.95, 1000, 1);
  EXPECT_LE(ci.lo, ci.hi);
  EXPECT_LE(ci.lo, point);
  EXPECT_GE(ci.hi, point);
  EXPECT_GT(ci.lo, 0);  // every candidate value is above every baseline value
  // A resampled median stays within its side's range, so every draw lies in
  // [relative_change(max base, min cand), relative_change(min base, max cand)].
  EXPECT_GE(ci.lo, relative_change(103, 102));
  EXPECT_LE(ci.hi, relative_change(98, 107));
}

TEST(CompareStats, BootstrapNarrowerConfidenceIsNested) {
  // Same seed, same draws: the 50% interval lies inside the 95% one and is narrower.
  auto wide = bootstrap_change_ci(kBase, kCand, 0.95, 1000, 3);
  auto narrow = bootstrap_change_ci(kBase, kCand, 0.50, 1000, 3);
  EXPECT_LE(wide.lo, narrow.lo);
  EXPECT_GE(wide.hi, narrow.hi);
  EXPECT_LT(narrow.hi - narrow.lo, wide.hi - wide.lo);
}

TEST(CompareStats, BootstrapOfIdenticalConstantSamplesIsZero) {
  auto ci = bootstrap_change_ci({5, 5, 5}, {5, 5, 5}, 0.95, 200, 9);
  EXPECT_EQ(ci.lo, 0);
  EXPECT_EQ(ci.hi, 0);
}

TEST(CompareStats, BootstrapOfSingleValuesIsThePointEstimate) {
  auto ci = bootstrap_change_ci({10}, {12}, 0.95, 100, 9);
  EXPECT_DOUBLE_EQ(ci.lo, 0.2);
  EXPECT_DOUBLE_EQ(ci.hi, 0.2);
}

TEST(CompareStats, BootstrapWithAnEmptySideIsZero) {
  auto no_base = bootstrap_change_ci({}, {1, 2}, 0.95, 100, 9);
  auto no_cand = bootstrap_change_ci({1, 2}, {}, 0.95, 100, 9);
  EXPECT_EQ(no_base.lo, 0);
  EXPECT_EQ(no_base.hi, 0);
  EXPECT_EQ(no_cand.lo, 0);
  EXPECT_EQ(no_cand.hi, 0);
}

// ---- noise_floor ----

TEST(CompareStats, NoiseFloorIsTheBaselineDriftEitherWay) {
  EXPECT_DOUBLE_EQ(noise_floor({100, 101, 99}, {104, 102, 103}), 0.03);  // medians 100 -> 103
  EXPECT_DOUBLE_EQ(noise_floor({100, 101, 99}, {96, 98, 97}), 0.03);     // 100 -> 97, still positive
}

TEST(CompareStats, NoiseFloorWithoutASecondBaselineIsZero) { EXPECT_EQ(noise_floor({100, 101}, {}), 0); }

TEST(CompareStats, NoiseFloorFromAZeroBaselineIsInfinite) {
  EXPECT_EQ(noise_floor({0, 0, 0}, {1, 2, 3}), kInf);
  EXPECT_EQ(noise_floor({0, 0, 0}, {-1, -2, -3}), kInf);
}

// ---- verdict_name, direction_from ----

TEST(CompareStats, VerdictNames) {
  EXPECT_STREQ(verdict_name(Verdict::NoChange), "no change");
  EXPECT_STREQ(verdict_name(Verdict::Regression), "regression");
  EXPECT_STREQ(verdict_name(Verdict::Improvement), "improvement");
  EXPECT_STREQ(verdict_name(Verdict::Noisy), "noisy");
  EXPECT_STREQ(verdict_name(Verdict::Changed), "changed");
}

TEST(CompareStats, DirectionFromString) {
  EXPECT_EQ(direction_from("lower"), Direction::Lower);
  EXPECT_EQ(direction_from("higher"), Direction::Higher);
  EXPECT_EQ(direction_from(""), Direction::None);
  EXPECT_EQ(direction_from("Lower"), Direction::None);  // exact spelling only
}

// ---- decide ----
// threshold 5%, alpha 0.05 unless the test is about them.

TEST(CompareStats, DecideWithinThresholdIsNoChange) {
  EXPECT_EQ(decide(0.04, 0.05, 0.0, 0.001, 0.05, Direction::Lower), Verdict::NoChange);
  EXPECT_EQ(decide(-0.05, 0.05, 0.0, 0.001, 0.05, Direction::Lower), Verdict::NoChange);  // boundary is inside
}

TEST(CompareStats, DecideThresholdTakesPrecedenceOverTheNoiseFloor) {
  // 4% is both within the threshold and within a 10% noise floor: NoChange, not Noisy.
  EXPECT_EQ(decide(0.04, 0.05, 0.10, 0.5, 0.05, Direction::Lower), Verdict::NoChange);
}

TEST(CompareStats, DecideWithinTheNoiseFloorIsNoisy) {
  // 8% passes the threshold but the baseline itself moved 10%, even though p is tiny.
  EXPECT_EQ(decide(0.08, 0.05, 0.10, 0.001, 0.05, Direction::Lower), Verdict::Noisy);
  EXPECT_EQ(decide(0.10, 0.05, 0.10, 0.001, 0.05, Direction::Lower), Verdict::Noisy);  // boundary is inside
}

TEST(CompareStats, DecideNotSignificantIsNoisy) {
  EXPECT_EQ(decide(0.20, 0.05, 0.01, 0.20, 0.05, Direction::Lower), Verdict::Noisy);
  EXPECT_EQ(decide(0.20, 0.05, 0.01, 0.05, 0.05, Direction::Lower), Verdict::Noisy);  // p == alpha
}

TEST(CompareStats, DecideLowerIsBetter) {
  EXPECT_EQ(decide(0.20, 0.05, 0.01, 0.01, 0.05, Direction::Lower), Verdict::Regression);
  EXPECT_EQ(decide(-0.20, 0.05, 0.01, 0.01, 0.05, Direction::Lower), Verdict::Improvement);
}

TEST(CompareStats, DecideHigherIsBetter) {
  EXPECT_EQ(decide(0.20, 0.05, 0.01, 0.01, 0.05, Direction::Higher), Verdict::Improvement);
  EXPECT_EQ(decide(-0.20, 0.05, 0.01, 0.01, 0.05, Direction::Higher), Verdict::Regression);
}

TEST(CompareStats, DecideWithoutDirectionIsChanged) {
  EXPECT_EQ(decide(0.20, 0.05, 0.01, 0.01, 0.05, Direction::None), Verdict::Changed);
  EXPECT_EQ(decide(-0.20, 0.05, 0.01, 0.01, 0.05, Direction::None), Verdict::Changed);
  EXPECT_EQ(decide(0.20, 0.05, 0.01, 0.20, 0.05, Direction::None), Verdict::Noisy);
}

TEST(CompareStats, DecideNaNChangeIsNoisy) {
  EXPECT_EQ(decide(kNaN, 0.05, 0.01, 0.01, 0.05, Direction::Lower), Verdict::Noisy);
  EXPECT_EQ(decide(kNaN, 0.05, 0.01, 0.01, 0.05, Direction::None), Verdict::Noisy);
}

TEST(CompareStats, DecideInfiniteChangeIsJudgedLikeAnyOther) {
  EXPECT_EQ(decide(kInf, 0.05, 0.01, 0.01, 0.05, Direction::Lower), Verdict::Regression);
  EXPECT_EQ(decide(kInf, 0.05, kInf, 0.01, 0.05, Direction::Lower), Verdict::Noisy);  // infinite noise floor
}

// ---- censored times: side_stats and Gehan's test ----

TEST(CompareStats, AMedianOnACensoredRunIsMoreThanTheBoundsMedian) {
  // 124 and 130 observed, three runs that never came within 3011, 3005, 3020 ms.
  auto s = censored_side_stats(std::vector<Observation>{{124, false}, {3011, true}, {130, false}, {3005, true}, {3020, true}});
  EXPECT_TRUE(s.median_above);
  EXPECT_DOUBLE_EQ(s.median, 3005);  // bounds 124 130 3005 3011 3020: at least this
  EXPECT_EQ(s.above, (std::vector<double>{3011, 3005, 3020}));
  EXPECT_EQ(s.n, 5u);
}

TEST(CompareStats, ACensoredRunBelowTheMiddleMovesTheMedianUp) {
  // Counted as longer than every observed time, the run at > 50 sits on top: 100 200 (>50) -> 200.
  auto s = censored_side_stats(std::vector<Observation>{{100, false}, {50, true}, {200, false}});
  EXPECT_FALSE(s.median_above);
  EXPECT_DOUBLE_EQ(s.median, 200);
  EXPECT_DOUBLE_EQ(s.min, 50);  // the bounds are the values the scatter is taken over
}

TEST(CompareStats, GehanByHand) {
  // a = {10, >20}, b = {5, 15}. Each value's score, surely smaller others
  // minus surely larger ones: 10: -1, >20: +3, 5: -3, 15: +1. W = -1 + 3 = 2.
  // The 6 ways to give two scores to a: 2, -4, 0, 0, 4, -2; |W'| >= 2 in 4.
  EXPECT_NEAR(gehan_p({{10, false}, {20, true}}, {{5, false}, {15, false}}), 4.0 / 6, 1e-12);
}

TEST(CompareStats, GehanWithoutCensoringIsTheExactMannWhitney) {
  const std::vector<double> a = {1.5, 3.2, 4.4, 7.0, 9.1, 2.2}, b = {2.9, 5.5, 6.1, 8.3, 10.4};
  std::vector<Observation> oa, ob;
  for (double x : a) oa.push_back({x, false});
  for (double x : b) ob.push_back({x, false});
  EXPECT_NEAR(gehan_p(oa, ob), mann_whitney_p(a, b), 1e-12);
}

TEST(CompareStats, GehanRanksNeverAboveEveryTimeBelowItsBound) {
  // Ten baseline runs that never came within ~3 s, five candidate runs back in
  // ~124 ms: every candidate is surely the shorter. Scores: each never +5, the
  // times -14 -12 -10 -8 -6, W = 50. Of the 3003 ways to choose 10 of 15, only
  // this one reaches |W| >= 50 (the mirror would need five scores summing to
  // 50; the largest five sum to 25): p = 1 / 3003.
  std::vector<Observation> never, back;
  for (int i = 0; i < 10; ++i) never.push_back({3000.0 + i, true});
  for (int i = 0; i < 5; ++i) back.push_back({120.0 + i, false});
  EXPECT_NEAR(gehan_p(never, back), 1.0 / 3003, 1e-12);
  EXPECT_NEAR(gehan_p(back, never), 1.0 / 3003, 1e-12);
}

TEST(CompareStats, GehanCannotTellTwoCensoredSidesApart) {
  EXPECT_DOUBLE_EQ(gehan_p({{3000, true}, {3010, true}}, {{2990, true}, {3020, true}}), 1);
  EXPECT_DOUBLE_EQ(gehan_p({}, {{1, false}}), 1);
}

TEST(CompareStats, GehanOfLargeSamplesUsesThePermutationVariance) {
  // 20 against 20, no censoring, every a below every b: scores of a are
  // -39, -37, ..., -1 (W = -400), of b 1, ..., 39; sum of squares 2 * 10660 = 21320.
  // Var = 20 * 20 / (40 * 39) * 21320 = 5466.67; z = 400 / 73.94 = 5.41.
  std::vector<Observation> a, b;
  for (int i = 0; i < 20; ++i) a.push_back({double(i), false}), b.push_back({100.0 + i, false});
  EXPECT_NEAR(gehan_p(a, b), std::erfc(400 / std::sqrt(20.0 * 20 / (40 * 39) * 21320) / std::sqrt(2.0)), 1e-15);
}

}  // namespace
}  // namespace mh::compare

TEST(CompareStats, RelativeSpreadIsTheScaledMadOverTheMedian) {
  // median 10, |x - 10| = {2, 1, 0, 1, 30} -> MAD 1 -> 1.4826 * 1 / 10
  EXPECT_NEAR(mh::compare::relative_spread({8, 9, 10, 11, 40}), 0.14826, 1e-9);
  EXPECT_DOUBLE_EQ(mh::compare::relative_spread({5, 5, 5, 5}), 0);
  EXPECT_DOUBLE_EQ(mh::compare::relative_spread({7}), 0);
  EXPECT_DOUBLE_EQ(mh::compare::relative_spread({0, 0, 0}), 0);
}

TEST(CompareStats, HolmAdjustsInPlaceAndStaysMonotone) {
  // sorted 0.01, 0.02, 0.04 -> 3*0.01=0.03, 2*0.02=0.04, 1*0.04=0.04
  auto a = mh::compare::holm_adjust({0.04, 0.01, 0.02});
  ASSERT_EQ(a.size(), 3u);
  EXPECT_NEAR(a[0], 0.04, 1e-12);
  EXPECT_NEAR(a[1], 0.03, 1e-12);
  EXPECT_NEAR(a[2], 0.04, 1e-12);
  auto b = mh::compare::holm_adjust({0.5, 0.9});  // capped at 1, never below an earlier one
  EXPECT_NEAR(b[0], 1.0, 1e-12);
  EXPECT_NEAR(b[1], 1.0, 1e-12);
  EXPECT_TRUE(mh::compare::holm_adjust({}).empty());
}
