// Step detection (see steps.h). Censored values take part at their bounds in
// the fit, and as Gehan's test sees them in the confirmation, as in a comparison.
#include "history/steps.h"

#include <algorithm>
#include <cmath>

namespace mh::history {

namespace {

using compare::Observation;

std::vector<Observation> values_between(const Series& s, size_t from, size_t to) {
  std::vector<Observation> out;
  for (size_t i = from; i < to; ++i) out.insert(out.end(), s.points[i].values.begin(), s.points[i].values.end());
  return out;
}

std::vector<double> bounds_of(const std::vector<Observation>& v) {
  std::vector<double> out;
  for (const auto& o : v) out.push_back(o.value);
  return out;
}

// Sum of absolute deviations from the median: the L1 cost of one segment.
double cost(const Series& s, size_t from, size_t to) {
  auto v = bounds_of(values_between(s, from, to));
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  const double median = v[v.size() / 2];
  double sum = 0;
  for (double x : v) sum += std::fabs(x - median);
  return sum;
}

// Binary segmentation: the split of [from, to) that lowers the cost most, then
// each side again, as long as both sides keep min_segment points.
void segment(const Series& s, size_t from, size_t to, size_t min_segment, std::vector<size_t>& cuts) {
  if (to - from < 2 * min_segment) return;
  const double whole = cost(s, from, to);
  double best = whole;
  size_t at = 0;
  for (size_t k = from + min_segment; k + min_segment <= to; ++k)
    if (double c = cost(s, from, k) + cost(s, k, to); c < best) {
      best = c;
      at = k;
    }
  if (at == 0) return;
  cuts.push_back(at);
  segment(s, from, at, min_segment, cuts);
  segment(s, at, to, min_segment, cuts);
}

// A boundary judged as a comparison judges a metric: the segment before as
// the baseline, the one after as the candidate.
Step judge(const Series& s, size_t from, size_t at, size_t to, const MetricRule& rule, const StepRule& r) {
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
    out.push_back(judge(s, from, cuts[i], to, rule, r));
  }
  return out;
}

}  // namespace

std::vector<Step> find_steps(const Series& s, const MetricRule& rule, const StepRule& r) {
  std::vector<size_t> cuts;
  segment(s, 0, s.points.size(), std::max<size_t>(r.min_segment, 1), cuts);
  std::sort(cuts.begin(), cuts.end());
  while (true) {
    auto steps = judge_all(s, cuts, rule, r);
    // The weakest boundary that does not stand: the largest p, then the smallest change.
    auto weakest = steps.end();
    for (auto it = steps.begin(); it != steps.end(); ++it)
      if (!confirmed(*it) && (weakest == steps.end() || it->p > weakest->p ||
                              (it->p == weakest->p && std::fabs(it->change) < std::fabs(weakest->change))))
        weakest = it;
    if (weakest == steps.end()) {
      // The interval only for the steps that stand: the bootstrap is the
      // costly part, and the pruning judges every boundary again each round.
      for (size_t i = 0; r.resamples > 0 && i < steps.size(); ++i) {
        const auto [from, to] = around(cuts, i, s.points.size());
        steps[i].ci = compare::bootstrap_change_ci(bounds_of(values_between(s, from, cuts[i])),
                                                   bounds_of(values_between(s, cuts[i], to)), 0.95, r.resamples, 1);
      }
      return steps;
    }
    cuts.erase(cuts.begin() + (weakest - steps.begin()));
  }
}

}  // namespace mh::history
