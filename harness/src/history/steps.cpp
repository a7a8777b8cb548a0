// Step detection (see steps.h). Censored values take part at their bounds in
// the fit, and as Gehan's test sees them in the confirmation, as in a comparison.
#include "history/steps.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <queue>

namespace mh::history {

namespace {

using compare::Observation;

// Of the penalty: tuned on the recorded A/A rounds (docs/history.md).
constexpr double kPenaltyScale = 0.2;
// Revisions either side of a step its bootstrap interval resamples, at most.
constexpr size_t kBootstrapRevisions = 100;

std::vector<Observation> values_between(const Series& s, size_t from, size_t to) {
  std::vector<Observation> out;
  for (size_t i = from; i < to; ++i) out.insert(out.end(), s.points[i].values.begin(), s.points[i].values.end());
  return out;
}

// The L1 cost (sum of absolute deviations from the median) of a set that
// grows one value at a time: a max-heap of the lower half and a min-heap of
// the upper half with their sums, so each value costs O(log n).
// Invariant: low.size() == high.size() or low.size() == high.size() + 1.
class RunningL1 {
 public:
  void add(double x) {
    if (low_.empty() || x <= low_.top()) {
      low_.push(x);
      sum_low_ += x;
    } else {
      high_.push(x);
      sum_high_ += x;
    }
    if (low_.size() > high_.size() + 1) move(low_, sum_low_, high_, sum_high_);
    if (high_.size() > low_.size()) move(high_, sum_high_, low_, sum_low_);
  }
  double cost() const {
    if (low_.empty()) return 0;
    const double m = low_.top();
    return m * double(low_.size()) - sum_low_ + sum_high_ - m * double(high_.size());
  }

 private:
  template <typename From, typename To>
  static void move(From& from, double& sum_from, To& to, double& sum_to) {
    const double x = from.top();
    from.pop();
    sum_from -= x;
    to.push(x);
    sum_to += x;
  }
  std::priority_queue<double> low_;
  std::priority_queue<double, std::vector<double>, std::greater<>> high_;
  double sum_low_ = 0, sum_high_ = 0;
};

// The best cut of [from, to): where the L1 cost falls most, and by how much.
struct Split {
  size_t from = 0, to = 0, at = 0;
  double gain = 0;
};

// Costs of [from, k) and [k, to) for every k, each in one pass: O(m log m).
Split best_split(const Series& s, size_t from, size_t to, size_t min_segment) {
  Split best{from, to, 0, 0};
  if (to - from < 2 * min_segment) return best;
  std::vector<double> prefix(to - from + 1, 0), suffix(to - from + 1, 0);
  RunningL1 forward, backward;
  for (size_t k = from; k < to; ++k) {
    for (const auto& o : s.points[k].values) forward.add(o.value);
    prefix[k + 1 - from] = forward.cost();
  }
  for (size_t k = to; k-- > from;) {
    for (const auto& o : s.points[k].values) backward.add(o.value);
    suffix[k - from] = backward.cost();
  }
  const double whole = prefix[to - from];
  for (size_t k = from + min_segment; k + min_segment <= to; ++k)
    if (double gain = whole - prefix[k - from] - suffix[k - from]; gain > best.gain) {
      best.at = k;
      best.gain = gain;
    }
  return best;
}

// Seeded intervals (Kovacs et al. 2023): at each length n, n/2, n/4, ... down
// to two minimum segments, intervals of that length overlapping by half. A
// short one holds a single step of two close together (up, then down), which
// the cut of the whole series cannot see under an L1 cost: O(n log^2 n) in all.
std::vector<Split> seeded_splits(const Series& s, size_t min_segment) {
  std::vector<Split> out;
  const size_t n = s.points.size();
  for (size_t length = n / 2; length >= 2 * min_segment; length /= 2) {
    const size_t stride = std::max<size_t>(length / 2, 1);
    for (size_t from = 0; from + length <= n; from += stride) {
      const bool last = from + stride + length > n;  // the last one reaches the end
      const size_t to = last ? n : from + length;
      if (auto sp = best_split(s, from, to, min_segment); sp.at != 0) out.push_back(sp);
      if (last) break;
    }
  }
  return out;
}

// The scatter the penalty is scaled by: of successive values' differences,
// which a few steps hardly move (1.4826 MAD / sqrt 2, else the mean absolute
// difference when most are equal, as in counts that are mostly 0).
double scatter(const Series& s) {
  std::vector<double> v, d;
  for (const auto& p : s.points)
    for (const auto& o : p.values) v.push_back(o.value);
  for (size_t i = 1; i < v.size(); ++i) d.push_back(std::fabs(v[i] - v[i - 1]));
  if (d.empty()) return 0;
  double mean = 0;
  for (double x : d) mean += x / double(d.size());
  std::nth_element(d.begin(), d.begin() + long(d.size() / 2), d.end());
  const double mad = d[d.size() / 2];
  return (mad > 0 ? 1.4826 * mad : mean) / std::sqrt(2.0);
}

// The cost a cut must save to be kept: BIC-like, log of the values, in the
// series' scatter (its expected absolute deviation, 0.8 of the scale).
double penalty(const Series& s) {
  size_t values = 0;
  for (const auto& p : s.points) values += p.values.size();
  return kPenaltyScale * 0.8 * scatter(s) * std::log(double(std::max<size_t>(values, 2)));
}

// Binary segmentation over the seeded intervals: the cut of [from, to) that
// saves most, of the segment itself or of a seeded interval inside it, as long
// as it saves more than the penalty; then each side again.
void segment(const Series& s, size_t from, size_t to, size_t min_segment, double beta,
             const std::vector<Split>& seeded, std::vector<size_t>& cuts) {
  Split best = best_split(s, from, to, min_segment);
  for (const auto& sp : seeded)
    if (sp.from >= from && sp.to <= to && sp.gain > best.gain && sp.at >= from + min_segment &&
        sp.at + min_segment <= to)
      best = sp;
  if (best.at == 0 || best.gain <= beta) return;
  cuts.push_back(best.at);
  segment(s, from, best.at, min_segment, beta, seeded, cuts);
  segment(s, best.at, to, min_segment, beta, seeded, cuts);
}

// A boundary judged as a comparison judges a metric: the segment before as
// the baseline, the one after as the candidate.
Step judge_candidate(const Series& s, size_t from, size_t at, size_t to, const MetricRule& rule, const StepRule& r) {
  const auto before = values_between(s, from, at), after = values_between(s, at, to);
  const auto b = compare::censored_side_stats(before), a = compare::censored_side_stats(after);
  Step step;
  step.index = at;
  step.revision = s.points[at].revision;
  step.before = b.median;
  step.after = a.median;
  step.change = compare::relative_change(b.median, a.median);
  step.censored = !b.above.empty() || !a.above.empty();
  step.p = step.censored ? compare::gehan_p(before, after) : compare::mann_whitney_p(b.values, a.values);
  // The noise floor as a comparison has it without a second baseline: how
  // much single runs of the segment before scatter.
  const double floor = compare::relative_spread(b.values);
  // The fit chose the cut that separates most: a step could have started at
  // any of the series' revisions after the first, and alpha is shared among them
  // (Bonferroni), else a flat series would show a step in far more than alpha
  // of its histories.
  const double alpha = r.alpha / double(std::max<size_t>(s.points.size() - 1, 1));
  step.verdict = std::fabs(a.median - b.median) <= rule.min_delta
                     ? compare::Verdict::NoChange
                     : compare::decide(step.change, rule.threshold, floor, step.p, alpha, rule.direction);
  return step;
}

bool confirmed(const Step& s) {
  return s.verdict == compare::Verdict::Regression || s.verdict == compare::Verdict::Improvement ||
         s.verdict == compare::Verdict::Changed;
}

// The segments either side of cut i: [from, cuts[i]) and [cuts[i], to).
std::pair<size_t, size_t> around(const std::vector<size_t>& cuts, size_t i, size_t points) {
  return {i == 0 ? 0 : cuts[i - 1], i + 1 < cuts.size() ? cuts[i + 1] : points};
}

// Each boundary against its neighbours' segments.
std::vector<Step> judge_all(const Series& s, const std::vector<size_t>& cuts, const MetricRule& rule,
                            const StepRule& r) {
  std::vector<Step> out;
  for (size_t i = 0; i < cuts.size(); ++i) {
    const auto [from, to] = around(cuts, i, s.points.size());
    out.push_back(judge_candidate(s, from, cuts[i], to, rule, r));
  }
  return out;
}

// The weakest boundary that does not stand: the largest p, then the smallest change.
std::optional<size_t> weakest(const std::vector<Step>& steps) {
  std::optional<size_t> out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& a = steps[i];
    if (confirmed(a)) continue;
    if (!out || a.p > steps[*out].p || (a.p == steps[*out].p && std::fabs(a.change) < std::fabs(steps[*out].change)))
      out = i;
  }
  return out;
}

}  // namespace

std::vector<Step> find_steps(const Series& s, const MetricRule& rule, const StepRule& r) {
  const size_t min_segment = std::max<size_t>(r.min_segment, 1), n = s.points.size();
  std::vector<size_t> cuts;
  segment(s, 0, n, min_segment, penalty(s), seeded_splits(s, min_segment), cuts);
  std::sort(cuts.begin(), cuts.end());
  auto steps = judge_all(s, cuts, rule, r);
  // Dropping a boundary joins its neighbours' segments: only the boundaries
  // either side of it are judged again.
  while (auto w = weakest(steps)) {
    cuts.erase(cuts.begin() + long(*w));
    steps.erase(steps.begin() + long(*w));
    for (size_t i = *w == 0 ? 0 : *w - 1; i <= *w && i < cuts.size(); ++i) {
      const auto [from, to] = around(cuts, i, n);
      steps[i] = judge_candidate(s, from, cuts[i], to, rule, r);
    }
  }
  // The interval only for the steps that stand, over at most
  // kBootstrapRevisions either side: the bootstrap is the costly part, and
  // its cost stays the same however long the segments.
  for (size_t i = 0; r.resamples > 0 && i < steps.size(); ++i) {
    auto [from, to] = around(cuts, i, n);
    from = std::max(from, cuts[i] > kBootstrapRevisions ? cuts[i] - kBootstrapRevisions : 0);
    to = std::min(to, cuts[i] + kBootstrapRevisions);
    steps[i].ci = compare::bootstrap_change_ci(compare::observed_values(values_between(s, from, cuts[i])),
                                               compare::observed_values(values_between(s, cuts[i], to)), 0.95, r.resamples, 1);
  }
  return steps;
}

}  // namespace mh::history
