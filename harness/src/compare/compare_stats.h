// Statistics of a comparison between two pins: pure functions over the values
// of one metric from the baseline runs, the candidate runs and the baseline
// runs again. No state, no I/O; unit-tested on hand-made inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mh::compare {

struct SideStats {
  double median = 0, min = 0, max = 0;
  double mad = 0;  // median absolute deviation from the median (not scaled)
  size_t n = 0;
  std::vector<double> values;
  // Runs whose figure never came (right-censored): their bounds, which are in
  // `values` too (so the figures above are of the bounds, lower bounds of what
  // those runs stand for). The median is censored, "more than `median`", when
  // it falls on a censored run, each counted as longer than every observed value.
  std::vector<double> above;
  bool median_above = false;
};
SideStats side_stats(const std::vector<double>& values);

// One run's figure, or (above) more than it: a time that never came within
// the run, whose value is the time the run had left.
struct Observation {
  double value = 0;
  bool above = false;
};
SideStats censored_side_stats(const std::vector<Observation>& values);
// Whether any of the values never came (is censored).
bool any_censored(const std::vector<Observation>& values);
// The values as observed: a value that never came is its bound.
std::vector<double> observed_values(const std::vector<Observation>& values);

// (candidate - baseline) / |baseline|; 0 when both are 0; +-inf when only the baseline is 0.
double relative_change(double baseline, double candidate);

struct Interval {
  double lo = 0, hi = 0;
};
// Percentile bootstrap interval of relative_change(median(base), median(cand)),
// resampling each side with replacement; deterministic for a given seed.
Interval bootstrap_change_ci(const std::vector<double>& base, const std::vector<double>& cand, double confidence,
                             int resamples, uint64_t seed);

// Two-sided Mann-Whitney U test: exact distribution when both samples are small
// (n1 + n2 <= 20) and without ties, else the normal approximation with tie and
// continuity correction. 1 when either side is empty.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);

// Two-sided Gehan test (Gehan 1965), the Mann-Whitney test for right-censored
// values: each pair scores +1 when its first value is surely the larger (a
// time more than 3000 against 124), -1 when surely the smaller, 0 when it
// cannot be told (ties, two censored values, a time observed above a censored
// one's bound). W, the sum over a's pairs with b, is tested against its
// permutation distribution (Mantel's scores: each value's count of surely
// smaller minus surely larger values): exact for n1 + n2 <= 30, else the
// normal approximation with variance n1 n2 / (n (n-1)) * sum of the squared
// scores. Without censored values W = 2U - n1 n2. 1 when either side is empty.
double gehan_p(const std::vector<Observation>& a, const std::vector<Observation>& b);

// A comparison run in rounds (A, B and A' of round k run within moments of each
// other) pairs its values by round: a machine whose speed drifts for minutes
// moves both sides of a round alike, so the change within rounds is seen through
// drift that swamps the medians. d_k = log(cand_k / base_k) per round;
//   change: exp(the Hodges-Lehmann estimate of d, the median of the Walsh
//     averages (d_i + d_j) / 2, i <= j) - 1;
//   lo, hi: the distribution-free interval of that estimate at `confidence`
//     (Walsh averages at the critical values of the signed-rank statistic;
//     none, -inf and +inf, when the rounds are too few to reach it);
//   p: two-sided Wilcoxon signed-rank test of d against 0 (rounds with d = 0
//     dropped; exact for up to 30 rounds without tied |d|, else the normal
//     approximation with tie correction).
// Beyond 2000 rounds (2 million Walsh averages) the median of d, the interval
// of the order statistics the sign test allows, and the sign test's p.
// Null when fewer than 2 rounds, or a value is not positive (no log ratio).
struct PairedChange {
  size_t rounds = 0;
  double change = 0, lo = 0, hi = 0, p = 1;
  bool bounded = false;  // lo and hi are an interval (enough rounds for `confidence`)
};
std::optional<PairedChange> paired_change(const std::vector<double>& base, const std::vector<double>& cand,
                                          double confidence);

// The smallest p-value mann_whitney_p can give for samples of n1 and n2 values
// (every value of one above every value of the other): with 5 and 5 it is
// 0.0079, so a Holm adjustment over 8 metrics can never bring it under 0.05.
double smallest_p(size_t n1, size_t n2);

// The noise floor of a metric: |relative change| of the medians of the baseline
// against the baseline run again (0 when there is no second baseline).
double noise_floor(const std::vector<double>& base, const std::vector<double>& base_again);

// How much single runs of one side scatter, relative to their median: the MAD
// scaled to a standard deviation of a normal sample (1.4826 MAD) over |median|.
// 0 for fewer than 2 values or a zero median.
double relative_spread(const std::vector<double>& values);

// Holm-Bonferroni adjusted p-values, in the order given: a family of tests
// (the metrics of one workload) keeps its chance of any false alarm at alpha.
std::vector<double> holm_adjust(const std::vector<double>& p);

enum class Direction { Lower, Higher, None };  // which way is better
enum class Verdict { NoChange, Regression, Improvement, Noisy, Changed };
const char* verdict_name(Verdict v);
Direction direction_from(const std::string& s);  // "lower", "higher", anything else: None

// A change is a regression (or improvement) when it goes the bad (good) way by
// more than both the threshold and the noise floor and the test is significant
// at alpha. Beyond the threshold but not beyond the noise floor or not
// significant: Noisy. Within the threshold: NoChange. Direction None and beyond
// both and significant: Changed.
Verdict decide(double change, double threshold, double noise_floor, double p, double alpha, Direction d);

}  // namespace mh::compare
