// The sequential rule and its replay (see sequential.h). Pure functions; the
// replay's draws come from a caller-seeded std::mt19937_64, each index the
// full 64-bit draw modulo the count, the same in every standard library.
#include "compare/sequential.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/stats.h"

namespace mh::compare {

std::vector<int> looks_up_to(int max_rounds) {
  std::vector<int> out;
  for (int look : {kMinRounds, 8, 12, 20, 30, 50, 80, 120, 200, 300, 500, 1000})
    if (look < max_rounds) out.push_back(look);
  out.push_back(std::max(max_rounds, kMinRounds));
  return out;
}

double alpha_per_look(double alpha, size_t looks) { return alpha / double(std::max<size_t>(looks, 1)); }

const char* decision_name(Decision d) {
  switch (d) {
    case Decision::Regression:
      return "regression";
    case Decision::Improvement:
      return "improvement";
    case Decision::Same:
      return "same";
    case Decision::Unknown:
      return "unknown";
  }
  return "unknown";
}

namespace {

// One-sided Mann-Whitney: the chance of a U this small or smaller when a is
// no smaller than b, from the two-sided p (the null distribution is symmetric).
double p_smaller(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;  // pairs with a above b, ties half
  for (double x : a)
    for (double y : b) u += x > y ? 1 : x == y ? 0.5 : 0;
  const double p2 = mann_whitney_p(a, b), half = double(a.size() * b.size()) / 2;
  return u < half ? p2 / 2 : 1 - p2 / 2;
}

std::vector<double> scaled(const std::vector<double>& v, double factor) {
  std::vector<double> out = v;
  for (double& x : out) x *= factor;
  return out;
}

template <typename T>
std::vector<T> first(const std::vector<T>& v, int rounds) {
  return {v.begin(), v.begin() + std::min<ptrdiff_t>(rounds, ptrdiff_t(v.size()))};
}

// A side's first values as observations, each censored where its flag says so.
std::vector<Observation> observed(const std::vector<double>& values, const std::vector<char>& above) {
  std::vector<Observation> out;
  for (size_t i = 0; i < values.size(); ++i) out.push_back({values[i], i < above.size() && above[i] != 0});
  return out;
}

bool gating(const MetricRounds& m) { return m.rule.direction != Direction::None; }

// A metric's figures on its first `rounds` rounds: the baseline (A and A'
// together), the candidate, the change of the medians and the noise floor.
struct LookStats {
  std::vector<double> base, cand;
  double change = 0, floor = 0, p = 1;
};

LookStats look_stats(const MetricRounds& m, int rounds) {
  LookStats s;
  const auto a = first(m.base, rounds), again = first(m.again, rounds);
  s.base = a;
  s.base.insert(s.base.end(), again.begin(), again.end());
  s.cand = first(m.cand, rounds);
  if (s.base.empty() || s.cand.empty()) return s;
  s.change = relative_change(stats::median(s.base), stats::median(s.cand));
  s.floor = std::max(noise_floor(a, again), relative_spread(s.base));
  // A time that never came ranks above every time that came before its bound
  // (Gehan's test), as the fixed-rounds comparison ranks it; without censored
  // values Gehan's test is Mann-Whitney's.
  auto base_obs = observed(a, first(m.base_above, rounds));
  const auto again_obs = observed(again, first(m.again_above, rounds));
  base_obs.insert(base_obs.end(), again_obs.begin(), again_obs.end());
  const auto cand_obs = observed(s.cand, first(m.cand_above, rounds));
  s.p = any_censored(base_obs) || any_censored(cand_obs) ? gehan_p(base_obs, cand_obs)
                                                         : mann_whitney_p(s.base, s.cand);
  return s;
}

// The threshold a "same" must stay within: the relative one, raised to the
// absolute floor over the baseline's median.
double same_threshold(const MetricRule& rule, const std::vector<double>& base) {
  const double median = std::fabs(stats::median(base));
  return median > 0 ? std::max(rule.threshold, rule.min_delta / median) : rule.threshold;
}

}  // namespace

bool equivalent(const std::vector<double>& base, const std::vector<double>& cand, double threshold, double alpha) {
  if (base.empty() || cand.empty()) return false;
  return p_smaller(cand, scaled(base, 1 + threshold)) < alpha && p_smaller(scaled(base, 1 - threshold), cand) < alpha;
}

std::vector<Decision> decide_look(const std::vector<MetricRounds>& metrics, int rounds, double alpha_look) {
  std::vector<LookStats> looked;
  std::vector<double> ps;
  for (const auto& m : metrics) {
    looked.push_back(look_stats(m, rounds));
    if (gating(m)) ps.push_back(looked.back().p);
  }
  const std::vector<double> adjusted = holm_adjust(ps);
  // "same" is shared by Bonferroni: each gating metric's two one-sided tests at alpha_look / metrics.
  const double alpha_same = alpha_look / double(std::max<size_t>(ps.size(), 1));
  std::vector<Decision> out;
  size_t next = 0;
  for (size_t i = 0; i < metrics.size(); ++i) {
    const MetricRounds& m = metrics[i];
    const LookStats& s = looked[i];
    if (!gating(m) || s.base.empty() || s.cand.empty()) {
      out.push_back(Decision::Unknown);
      continue;
    }
    const double p = adjusted[next++];
    const bool beyond_floor =
        std::fabs(stats::median(s.cand) - stats::median(s.base)) > m.rule.min_delta;
    const Verdict v = beyond_floor ? decide(s.change, m.rule.threshold, s.floor, p, alpha_look, m.rule.direction)
                                   : Verdict::NoChange;
    if (v == Verdict::Regression) out.push_back(Decision::Regression);
    else if (v == Verdict::Improvement) out.push_back(Decision::Improvement);
    else if (equivalent(s.base, s.cand, same_threshold(m.rule, s.base), alpha_same)) out.push_back(Decision::Same);
    else out.push_back(Decision::Unknown);
  }
  return out;
}

SequentialOutcome run_sequential(const std::vector<MetricRounds>& metrics, const std::vector<int>& looks,
                                 double alpha) {
  SequentialOutcome o;
  o.decisions.assign(metrics.size(), Decision::Unknown);
  o.rounds_needed.assign(metrics.size(), looks.empty() ? 0 : looks.back());
  std::vector<bool> decided(metrics.size(), false);
  for (size_t i = 0; i < metrics.size(); ++i) decided[i] = !gating(metrics[i]);
  // Recorded rounds may stop short of the last look (a comparison still running): its looks so far.
  size_t available = SIZE_MAX;
  for (const auto& m : metrics)
    if (gating(m)) available = std::min({available, m.base.size(), m.cand.size()});
  const double alpha_look = alpha_per_look(alpha, looks.size());
  for (int look : looks) {
    if (size_t(look) > available) break;
    o.rounds_run = look;
    const auto now = decide_look(metrics, look, alpha_look);
    for (size_t i = 0; i < metrics.size(); ++i)
      if (!decided[i] && now[i] != Decision::Unknown) {
        decided[i] = true;
        o.decisions[i] = now[i];
        o.rounds_needed[i] = look;
      }
    if (std::all_of(decided.begin(), decided.end(), [](bool d) { return d; })) break;
  }
  for (size_t i = 0; i < metrics.size(); ++i)
    if (!decided[i]) o.rounds_needed[i] = o.rounds_run;
  return o;
}

std::vector<MetricRounds> rounds_of(const WorkloadComparison& w, const std::vector<RunRecord>& runs) {
  std::vector<const RunRecord*> mine;
  for (const auto& r : runs)
    if (r.workload == w.workload && r.status == Status::Ok) mine.push_back(&r);
  std::stable_sort(mine.begin(), mine.end(),
                   [](const RunRecord* a, const RunRecord* b) { return a->repetition < b->repetition; });
  std::vector<MetricRounds> out;
  for (const auto& m : w.metrics) {
    MetricRounds mr{m.metric, m.rule, {}, {}, {}};
    for (const RunRecord* r : mine) {
      std::optional<double> v = metric_value(*r, m.metric);
      const bool above = !v || !std::isfinite(*v);
      if (above) v = metric_above(*r, m.metric);
      if (!v || !std::isfinite(*v)) continue;
      const bool base = r->role == kRoleBaseline, cand = r->role == kRoleCandidate;
      auto& to = base ? mr.base : cand ? mr.cand : mr.again;
      auto& flags = base ? mr.base_above : cand ? mr.cand_above : mr.again_above;
      flags.resize(to.size(), 0);
      to.push_back(*v);
      flags.push_back(above ? 1 : 0);
    }
    out.push_back(std::move(mr));
  }
  return out;
}

std::vector<std::string> apply_sequential(Comparison& c, const std::vector<RunRecord>& runs,
                                          const std::vector<int>& looks, double alpha) {
  c.looks = looks;
  c.alpha_look = alpha_per_look(alpha, looks.size());
  std::vector<std::string> more;
  for (auto& w : c.workloads) {
    const SequentialOutcome o = run_sequential(rounds_of(w, runs), looks, alpha);
    bool unknown = false;
    for (size_t i = 0; i < w.metrics.size(); ++i) {
      MetricComparison& m = w.metrics[i];
      if (m.rule.direction == Direction::None) continue;
      m.decision = decision_name(o.decisions[i]);
      m.rounds_needed = o.rounds_needed[i];
      static constexpr Verdict kVerdictOf[] = {Verdict::Regression, Verdict::Improvement, Verdict::NoChange,
                                               Verdict::Noisy};  // in Decision's order
      m.verdict = kVerdictOf[size_t(o.decisions[i])];
      // Only a gated metric asks for more rounds: a reported one left unknown is noisy.
      unknown = unknown || (m.gated && o.decisions[i] == Decision::Unknown);
    }
    if (unknown && o.rounds_run < looks.back()) more.push_back(w.workload);
  }
  return more;
}

namespace {

// What the candidate's values are multiplied by to move them the bad way by
// `inject` times the threshold a "same" must stay within (the absolute floor
// over the recorded baseline's median, when that is larger).
double injected_factor(const MetricRounds& recorded, double inject) {
  const double moved = inject * same_threshold(recorded.rule, recorded.base);
  return recorded.rule.direction == Direction::Higher ? 1 / (1 + moved) : 1 + moved;
}

}  // namespace

ReplayRates replay(const std::vector<MetricRounds>& recorded, const std::vector<int>& looks, double alpha,
                   int resamples, double inject, uint64_t seed) {
  ReplayRates rates;
  rates.resamples = resamples;
  size_t rounds = SIZE_MAX;
  for (const auto& m : recorded) rounds = std::min({rounds, m.base.size(), m.cand.size()});
  if (recorded.empty() || rounds == 0 || looks.empty()) return rates;
  std::mt19937_64 rng(seed);
  std::vector<MetricRounds> drawn = recorded;
  std::vector<double> factor;
  for (const auto& m : recorded) factor.push_back(injected_factor(m, inject));
  for (int r = 0; r < resamples; ++r) {
    std::vector<size_t> pick(size_t(looks.back()));
    for (size_t& i : pick) i = size_t(rng() % rounds);
    for (size_t k = 0; k < recorded.size(); ++k) {
      const MetricRounds& from = recorded[k];
      MetricRounds& to = drawn[k];
      to.base.clear(), to.cand.clear(), to.again.clear();
      to.base_above.clear(), to.cand_above.clear(), to.again_above.clear();
      const auto flag = [](const std::vector<char>& f, size_t i) -> char { return i < f.size() ? f[i] : 0; };
      for (size_t i : pick) {
        to.base.push_back(from.base[i]);
        to.base_above.push_back(flag(from.base_above, i));
        to.cand.push_back(from.cand[i] * factor[k]);
        to.cand_above.push_back(flag(from.cand_above, i));
        if (i < from.again.size()) {
          to.again.push_back(from.again[i]);
          to.again_above.push_back(flag(from.again_above, i));
        }
      }
    }
    const SequentialOutcome o = run_sequential(drawn, looks, alpha);
    bool regressed = false;
    for (size_t k = 0; k < drawn.size(); ++k) {
      if (!gating(drawn[k])) continue;
      ++rates.by_metric[drawn[k].metric][decision_name(o.decisions[k])];
      regressed = regressed || o.decisions[k] == Decision::Regression;
    }
    rates.any_regression += regressed ? 1 : 0;
    ++rates.rounds_run[o.rounds_run];
  }
  return rates;
}

}  // namespace mh::compare
