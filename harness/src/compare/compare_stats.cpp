// Comparison statistics (see compare_stats.h): pure functions, no state, no I/O,
// safe to call from any thread. Every random draw comes from a caller-seeded
// std::mt19937_64 so that a report can be reproduced on any standard library.
#include "compare/compare_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "core/stats.h"

namespace mh::compare {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Percentile of sorted values by linear interpolation between closest ranks
// (Hyndman-Fan type 7, numpy's default), q in [0, 1].
double percentile_sorted(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t i = static_cast<size_t>(std::floor(pos));
  const double frac = pos - static_cast<double>(i);
  // Equal neighbours (including two infinities, whose difference is NaN) or an
  // exact rank need no interpolation.
  if (i + 1 >= sorted.size() || frac == 0 || sorted[i] == sorted[i + 1]) return sorted[i];
  return sorted[i] + frac * (sorted[i + 1] - sorted[i]);
}

// Index in [0, n): the full 64-bit draw modulo n. The bias is at most n / 2^64,
// far below anything a bootstrap can see, and unlike std::uniform_int_distribution
// the mapping is the same in every standard library.
size_t draw_index(std::mt19937_64& rng, size_t n) { return static_cast<size_t>(rng() % n); }

double resampled_median_mt(const std::vector<double>& v, std::mt19937_64& rng, std::vector<double>& scratch) {
  scratch.resize(v.size());
  for (double& x : scratch) x = v[draw_index(rng, v.size())];
  return stats::median(scratch);  // takes a copy; scratch only saves the allocation per draw
}

// P(U <= u) and P(U >= u) under H0 for samples of n1 and n2 distinct values.
// count[k] = number of the C(n1+n2, n1) orderings giving U = k, built with
// f(n1, n2, k) = f(n1 - 1, n2, k - n2) + f(n1, n2 - 1, k): the largest value
// of all either belongs to the first sample (beating all n2 of the second) or
// to the second (beating none). Counts stay below C(20, 10) and are exact in double.
struct Tails {
  double lower, upper;
};
Tails exact_u_tails(size_t n1, size_t n2, size_t u) {
  // table[i][j] is the count vector for sizes (i, j); indices up to i * j.
  std::vector<std::vector<std::vector<double>>> table(n1 + 1, std::vector<std::vector<double>>(n2 + 1));
  for (size_t i = 0; i <= n1; ++i) {
    for (size_t j = 0; j <= n2; ++j) {
      auto& cur = table[i][j];
      cur.assign(i * j + 1, 0.0);
      if (i == 0 || j == 0) {
        cur[0] = 1;
        continue;
      }
      const auto& without_first = table[i - 1][j];
      for (size_t k = 0; k < without_first.size(); ++k) cur[k + j] += without_first[k];
      const auto& without_second = table[i][j - 1];
      for (size_t k = 0; k < without_second.size(); ++k) cur[k] += without_second[k];
    }
  }
  const auto& count = table[n1][n2];
  double total = 0, le = 0, ge = 0;
  for (size_t k = 0; k < count.size(); ++k) {
    total += count[k];
    if (k <= u) le += count[k];
    if (k >= u) ge += count[k];
  }
  return {le / total, ge / total};
}

// +1 when x is surely larger than y, -1 when surely smaller, 0 when it cannot
// be told. A censored value is more than its bound: larger than any value
// observed at or below the bound, and of unknown order against anything else.
int surely_compared(const Observation& x, const Observation& y) {
  if (!x.above && !y.above) return (x.value > y.value) - (x.value < y.value);
  if (x.above && !y.above) return y.value <= x.value ? 1 : 0;
  if (!x.above && y.above) return x.value <= y.value ? -1 : 0;
  return 0;
}

// P(|W| >= |w|) when W is the sum of n1 of the integer scores drawn without
// replacement, every draw equally likely: count[j][s] is the number of
// subsets of j scores summing to s - offset, built one score at a time.
double exact_two_sided(const std::vector<int>& scores, size_t n1, int w) {
  int reach = 0;
  for (int h : scores) reach += std::abs(h);
  const size_t width = size_t(2 * reach + 1);
  std::vector<std::vector<double>> count(n1 + 1, std::vector<double>(width, 0.0));
  count[0][size_t(reach)] = 1;
  for (int h : scores)
    for (size_t j = n1; j >= 1; --j)  // downwards: each score joins a subset at most once
      for (size_t s = 0; s < width; ++s) {
        const long from = long(s) - h;
        if (from >= 0 && from < long(width)) count[j][s] += count[j - 1][size_t(from)];
      }
  double total = 0, extreme = 0;
  for (size_t s = 0; s < width; ++s) {
    total += count[n1][s];
    if (std::abs(int(s) - reach) >= std::abs(w)) extreme += count[n1][s];
  }
  return total > 0 ? std::min(1.0, extreme / total) : 1.0;
}

// Largest pooled sample the exact permutation distribution is counted for.
constexpr size_t kGehanExactMax = 30;

// The distribution of the signed-rank statistic W+ (the sum of the ranks of the
// positive differences) for n differences without ties or zeros: count[w] of
// the 2^n sign patterns, by f(n, w) = f(n - 1, w) + f(n - 1, w - n). Over 2^n,
// a probability; exact in double for n <= 30 (2^30 patterns).
std::vector<double> signed_rank_distribution(size_t n) {
  std::vector<double> count{1};
  for (size_t k = 1; k <= n; ++k) {
    std::vector<double> next(count.size() + k, 0.0);
    for (size_t w = 0; w < count.size(); ++w) {
      next[w] += count[w];
      next[w + k] += count[w];
    }
    count = std::move(next);
  }
  const double total = std::ldexp(1.0, static_cast<int>(n));
  for (double& c : count) c /= total;
  return count;
}

constexpr size_t kExactSignedRank = 30;

// Two-sided signed-rank p-value of d (zeros dropped).
double signed_rank_p(const std::vector<double>& d) {
  std::vector<double> a;
  for (double x : d)
    if (x != 0) a.push_back(x);
  const size_t n = a.size();
  if (n == 0) return 1;
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t l, size_t r) { return std::fabs(a[l]) < std::fabs(a[r]); });
  double w_plus = 0, tie_term = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && std::fabs(a[order[j]]) == std::fabs(a[order[i]])) ++j;
    const double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k)
      if (a[order[k]] > 0) w_plus += avg_rank;
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const double dn = static_cast<double>(n);
  if (n <= kExactSignedRank && tie_term == 0) {
    const auto dist = signed_rank_distribution(n);
    const size_t w = static_cast<size_t>(std::llround(w_plus));
    double lower = 0, upper = 0;
    for (size_t k = 0; k < dist.size(); ++k) (k <= w ? lower : upper) += dist[k];
    upper += dist[w];  // P(W+ >= w)
    return std::min(1.0, 2 * std::min(lower, upper));
  }
  const double mean = dn * (dn + 1) / 4;
  const double var = dn * (dn + 1) * (2 * dn + 1) / 24 - tie_term / 48;
  if (var <= 0) return 1;
  const double z = std::max(0.0, std::fabs(w_plus - mean) - 0.5) / std::sqrt(var);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

// The normal quantile of 1 - tail, by bisection on erfc.
double upper_quantile(double tail) {
  double lo = 0, hi = 10;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > tail ? lo : hi) = mid;
  }
  return lo;
}

// How many of the smallest (and largest) Walsh averages the interval at
// `confidence` leaves out: the largest c with P(W+ < c) <= (1 - confidence) / 2,
// exact for up to kExactSignedRank differences, else from the normal
// approximation. 0 when even the extremes are not far enough out.
size_t walsh_cut(size_t n, double confidence) {
  const double tail = (1 - confidence) / 2;
  if (n <= kExactSignedRank) {
    const auto dist = signed_rank_distribution(n);
    double below = 0;
    size_t c = 0;
    while (c < dist.size() && below + dist[c] <= tail) below += dist[c++];
    return c;
  }
  const double dn = static_cast<double>(n);
  const double c = dn * (dn + 1) / 4 - upper_quantile(tail) * std::sqrt(dn * (dn + 1) * (2 * dn + 1) / 24);
  return c <= 0 ? 0 : static_cast<size_t>(std::floor(c));
}


// More rounds than this (n (n + 1) / 2 Walsh averages: 2 million at 2000) take
// the median of the differences and the sign test instead.
constexpr size_t kMaxWalshRounds = 2000;

// The median of the log ratios, its interval from the order statistics the sign
// test allows (normal approximation: n is large here) and the sign test's p.
PairedChange sign_test_change(std::vector<double> d, double confidence) {
  std::sort(d.begin(), d.end());
  const double n = static_cast<double>(d.size());
  PairedChange out;
  out.rounds = d.size();
  out.change = std::expm1(stats::median(d));
  const double k = std::floor(n / 2 - upper_quantile((1 - confidence) / 2) * std::sqrt(n) / 2);
  out.bounded = k >= 1;
  out.lo = out.bounded ? std::expm1(d[static_cast<size_t>(k) - 1]) : -1.0;
  out.hi = out.bounded ? std::expm1(d[d.size() - static_cast<size_t>(k)]) : kInf;
  const double pos = static_cast<double>(std::count_if(d.begin(), d.end(), [](double x) { return x > 0; }));
  const double nonzero = static_cast<double>(std::count_if(d.begin(), d.end(), [](double x) { return x != 0; }));
  const double z = nonzero > 0 ? std::max(0.0, std::fabs(pos - nonzero / 2) - 0.5) / (std::sqrt(nonzero) / 2) : 0;
  out.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return out;
}

}  // namespace

std::optional<PairedChange> paired_change(const std::vector<double>& base, const std::vector<double>& cand,
                                          double confidence) {
  const size_t n = std::min(base.size(), cand.size());
  if (n < 2) return std::nullopt;
  std::vector<double> d(n);
  for (size_t k = 0; k < n; ++k) {
    if (!(base[k] > 0) || !(cand[k] > 0) || !std::isfinite(base[k]) || !std::isfinite(cand[k])) return std::nullopt;
    d[k] = std::log(cand[k] / base[k]);
  }
  if (n > kMaxWalshRounds) return sign_test_change(std::move(d), std::clamp(confidence, 0.0, 1.0));
  std::vector<double> walsh;
  walsh.reserve(n * (n + 1) / 2);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i; j < n; ++j) walsh.push_back((d[i] + d[j]) / 2);
  std::sort(walsh.begin(), walsh.end());
  PairedChange out;
  out.rounds = n;
  out.change = std::expm1(stats::median(walsh));
  const size_t cut = walsh_cut(n, std::clamp(confidence, 0.0, 1.0));
  out.bounded = cut > 0;
  out.lo = out.bounded ? std::expm1(walsh[cut - 1]) : -1.0;
  out.hi = out.bounded ? std::expm1(walsh[walsh.size() - cut]) : kInf;
  out.p = signed_rank_p(d);
  return out;
}

std::vector<double> observed_values(const std::vector<Observation>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (const auto& o : values) out.push_back(o.value);
  return out;
}

bool any_censored(const std::vector<Observation>& values) {
  return std::any_of(values.begin(), values.end(), [](const Observation& o) { return o.above; });
}

SideStats censored_side_stats(const std::vector<Observation>& values) {
  std::vector<double> bounds, ranked;
  std::vector<double> above;
  for (const auto& o : values) {
    bounds.push_back(o.value);
    ranked.push_back(o.above ? kInf : o.value);
    if (o.above) above.push_back(o.value);
  }
  SideStats s = side_stats(bounds);
  s.above = std::move(above);
  if (s.above.empty()) return s;
  // Counted as longer than every observed value, a censored run can only move
  // the median up; when it lands on one, the median of the bounds is a lower
  // bound of the true one (every true value is at least its bound).
  const double m = stats::median(ranked);
  s.median_above = std::isinf(m);
  if (!s.median_above) s.median = m;
  return s;
}

double gehan_p(const std::vector<Observation>& a, const std::vector<Observation>& b) {
  if (a.empty() || b.empty()) return 1;
  std::vector<Observation> pooled = a;
  pooled.insert(pooled.end(), b.begin(), b.end());
  const size_t n = pooled.size(), n1 = a.size();
  std::vector<int> score(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) score[i] += surely_compared(pooled[i], pooled[j]);
  int w = 0;
  for (size_t i = 0; i < n1; ++i) w += score[i];
  if (n <= kGehanExactMax) return exact_two_sided(score, n1, w);
  double squares = 0;
  for (int h : score) squares += double(h) * double(h);
  const double dn1 = double(n1), dn2 = double(n - n1), dn = double(n);
  const double var = dn1 * dn2 / (dn * (dn - 1)) * squares;
  if (var <= 0) return 1;  // nothing can be told apart: no evidence either way
  return std::min(1.0, std::erfc(std::fabs(double(w)) / std::sqrt(var) / std::sqrt(2.0)));
}

SideStats side_stats(const std::vector<double>& values) {
  SideStats s;
  if (values.empty()) return s;
  s.values = values;
  s.n = values.size();
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  s.median = stats::median(values);
  std::vector<double> dev(values.size());
  std::transform(values.begin(), values.end(), dev.begin(), [&](double x) { return std::fabs(x - s.median); });
  s.mad = stats::median(std::move(dev));
  return s;
}

double relative_change(double baseline, double candidate) {
  if (baseline == 0) {
    if (candidate == 0) return 0;
    return candidate > 0 ? kInf : -kInf;
  }
  return (candidate - baseline) / std::fabs(baseline);
}

Interval bootstrap_change_ci(const std::vector<double>& base, const std::vector<double>& cand, double confidence,
                             int resamples, uint64_t seed) {
  if (base.empty() || cand.empty()) return {};
  if (resamples <= 0) {  // nothing to resample: the interval shrinks to the point estimate
    const double point = relative_change(stats::median(base), stats::median(cand));
    return {point, point};
  }
  std::mt19937_64 rng(seed);
  std::vector<double> scratch, changes;
  changes.reserve(static_cast<size_t>(resamples));
  // Draw order is part of the reproducibility contract: per resample, all base
  // indices, then all candidate indices.
  for (int r = 0; r < resamples; ++r) {
    const double mb = resampled_median_mt(base, rng, scratch);
    const double mc = resampled_median_mt(cand, rng, scratch);
    changes.push_back(relative_change(mb, mc));
  }
  std::sort(changes.begin(), changes.end());
  const double tail = (1 - std::clamp(confidence, 0.0, 1.0)) / 2;
  return {percentile_sorted(changes, tail), percentile_sorted(changes, 1 - tail)};
}

double smallest_p(size_t n1, size_t n2) {
  std::vector<double> low(n1), high(n2);
  for (size_t i = 0; i < n1; ++i) low[i] = double(i);
  for (size_t i = 0; i < n2; ++i) high[i] = double(n1 + i);
  return mann_whitney_p(low, high);
}

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 1;
  const size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;

  struct Obs {
    double x;
    bool from_a;
  };
  std::vector<Obs> all;
  all.reserve(n);
  for (double x : a) all.push_back({x, true});
  for (double x : b) all.push_back({x, false});
  std::sort(all.begin(), all.end(), [](const Obs& l, const Obs& r) { return l.x < r.x; });

  // Average ranks (1-based) over each run of equal values; the run lengths t
  // feed the tie correction sum(t^3 - t).
  double rank_sum_a = 0, tie_term = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && all[j].x == all[i].x) ++j;
    const double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k)
      if (all[k].from_a) rank_sum_a += avg_rank;
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2), dn = static_cast<double>(n);
  // U of the first sample: the number of pairs (a_i, b_j) with a_i > b_j, ties counting 1/2.
  const double u = rank_sum_a - dn1 * (dn1 + 1) / 2;

  if (n <= 20 && tie_term == 0) {
    // Without ties U is a whole number; rounding only guards the float sum of ranks.
    const auto [lower, upper] = exact_u_tails(n1, n2, static_cast<size_t>(std::llround(u)));
    return std::min(1.0, 2 * std::min(lower, upper));
  }

  const double mean = dn1 * dn2 / 2;
  const double var = dn1 * dn2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (var <= 0) return 1;  // every value equal: no evidence either way
  // A negative corrected distance means U is within 1/2 of its mean: p = 1.
  const double z = std::max(0.0, std::fabs(u - mean) - 0.5) / std::sqrt(var);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));  // 2 * (1 - Phi(z))
}

double noise_floor(const std::vector<double>& base, const std::vector<double>& base_again) {
  if (base_again.empty()) return 0;
  return std::fabs(relative_change(stats::median(base), stats::median(base_again)));
}

std::vector<double> holm_adjust(const std::vector<double>& p) {
  const size_t m = p.size();
  std::vector<size_t> order(m);
  for (size_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> out(m);
  double running = 0;
  for (size_t k = 0; k < m; ++k) {
    running = std::max(running, std::min(1.0, double(m - k) * p[order[k]]));
    out[order[k]] = running;
  }
  return out;
}

double relative_spread(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  SideStats s = side_stats(values);
  if (s.median == 0) return 0;
  return 1.4826 * s.mad / std::fabs(s.median);
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::NoChange:
      return "no change";
    case Verdict::Regression:
      return "regression";
    case Verdict::Improvement:
      return "improvement";
    case Verdict::Noisy:
      return "noisy";
    case Verdict::Changed:
      return "changed";
  }
  return "unknown";  // unreachable for a valid enum value
}

Direction direction_from(const std::string& s) {
  if (s == "lower") return Direction::Lower;
  if (s == "higher") return Direction::Higher;
  return Direction::None;
}

Verdict decide(double change, double threshold, double noise_floor, double p, double alpha, Direction d) {
  // A NaN change means the comparison could not be computed: never claim a direction.
  if (std::isnan(change)) return Verdict::Noisy;
  const double size = std::fabs(change);
  // The threshold is checked first: a change the user declared too small to
  // matter is NoChange even when the noise floor is larger still.
  if (size <= threshold) return Verdict::NoChange;
  // Written as !(p < alpha) so that a NaN p counts as not significant.
  if (size <= noise_floor || !(p < alpha)) return Verdict::Noisy;
  if (d == Direction::None) return Verdict::Changed;
  const bool bad = (d == Direction::Lower && change > 0) || (d == Direction::Higher && change < 0);
  return bad ? Verdict::Regression : Verdict::Improvement;
}

}  // namespace mh::compare
