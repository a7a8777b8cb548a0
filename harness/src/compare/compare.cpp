// Comparison analysis and thresholds (see compare.h).
#include "compare/compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/summary.h"
#include "sys/json_read.h"

namespace mh {

using compare::Direction;
using compare::Observation;
using compare::SideStats;
using compare::Verdict;
using compare::any_censored;
using compare::bootstrap_change_ci;
using compare::censored_side_stats;
using compare::direction_from;
using compare::gehan_p;
using compare::holm_adjust;
using compare::mann_whitney_p;
using compare::observed_values;
using compare::paired_change;
using compare::relative_change;
using compare::relative_spread;
using compare::smallest_p;

namespace {

// "WORKLOAD:METRIC" (no '.' before the colon: metric names have one, workload
// names never) applies to that workload's metric only; anything else to the
// metric of every workload.
bool pattern_matches(const std::string& pattern, const std::string& metric, const std::string& workload) {
  const size_t colon = pattern.find(':');
  if (colon == std::string::npos || pattern.find('.') < colon)
    return fnmatch(pattern.c_str(), metric.c_str(), 0) == 0;
  return !workload.empty() && fnmatch(pattern.substr(0, colon).c_str(), workload.c_str(), 0) == 0 &&
         fnmatch(pattern.c_str() + colon + 1, metric.c_str(), 0) == 0;
}

}  // namespace

MetricRule Thresholds::rule_for(const std::string& metric, const std::string& declared_better,
                                const std::string& workload) const {
  for (const auto& [pattern, rule] : rules)
    if (pattern_matches(pattern, metric, workload)) return rule;
  if (const MetricSpec* spec = find_metric(metric))
    return MetricRule{direction_from(spec->better), spec->threshold, spec->min_delta};
  MetricRule r = fallback;
  if (!declared_better.empty()) r.direction = direction_from(declared_better);
  return r;
}

namespace {

MetricRule read_rule(const JsonIn& j, MetricRule r) {
  j.object();
  if (auto b = j.find("better")) {
    const std::string better = b->string();
    if (better != "lower" && better != "higher" && better != "none") b->fail("one of lower, higher, none");
    r.direction = direction_from(better);
  }
  r.threshold = j.number_or("threshold", r.threshold, 0, std::numeric_limits<double>::max());
  r.min_delta = j.number_or("min_delta", r.min_delta, 0, std::numeric_limits<double>::max());
  return r;
}

Thresholds thresholds_from(const JsonIn& j) {
  Thresholds t;
  if (auto d = j.find("default")) t.fallback = read_rule(*d, t.fallback);
  if (auto metrics = j.find("metrics"))
    metrics->each_member([&](const std::string& k, const JsonIn& v) {
      v.object();
      const auto gate = v.find("gate");
      if (gate) t.gates.push_back({k, gate->boolean()});
      if (!gate || v.has("better") || v.has("threshold") || v.has("min_delta"))
        t.rules.push_back({k, read_rule(v, t.fallback)});
    });
  return t;
}

// Every ok run's figure, a time that never came as more than its bound.
std::vector<Observation> observations_of(const std::vector<const RunRecord*>& runs, const std::string& metric) {
  std::vector<Observation> out;
  for (const RunRecord* r : runs) {
    if (auto v = metric_value(*r, metric); v && std::isfinite(*v)) out.push_back({*v, false});
    else if (auto above = metric_above(*r, metric)) out.push_back({*above, true});
  }
  return out;
}

// The smallest relative change the comparison could have called a regression:
// a change must pass the threshold, the noise floor and the absolute floor, and
// the test must be able to reach alpha at all with these many runs.
void set_resolution(MetricComparison& m, bool can_pass, int base_runs, int cand_runs) {
  if (m.rule.direction == Direction::None) {
    m.resolution_reason = "informational: never called a regression";
    return;
  }
  if (!can_pass) {
    m.resolution_reason = fmt::format("with {} baseline and {} candidate runs no p-value can pass alpha", base_runs,
                                      cand_runs);
    return;
  }
  double r = std::max(m.rule.threshold, m.noise_floor);
  if (m.rule.min_delta > 0) {
    if (m.baseline.median == 0) {
      m.resolution_reason = "the baseline median is 0: only an absolute change above the floor counts";
      return;
    }
    r = std::max(r, m.rule.min_delta / std::fabs(m.baseline.median));
  }
  if (!std::isfinite(r)) {
    m.resolution_reason = "the noise floor is unbounded";
    return;
  }
  m.resolution = r;
}

}  // namespace

std::optional<Thresholds> load_thresholds(const std::string& path, std::string& error) {
  auto j = read_json_file(path, kFileLimits, error);
  if (!j) {
    error = "the thresholds file " + error;
    return std::nullopt;
  }
  return read_checked<Thresholds>([&] { return thresholds_from(JsonIn(*j, path)); }, error);
}

bool Comparison::regressed() const {
  for (const auto& w : workloads)
    for (const auto& m : w.metrics)
      if (m.gated && m.verdict == Verdict::Regression) return true;
  return false;
}

int exit_code(const Comparison& c) {
  if (!c.incomplete.empty()) return kExitIncomplete;
  return c.regressed() ? kExitRegression : kExitNoRegression;
}

std::optional<Gate> parse_gate(const std::string& text, std::string& error) {
  if (text == "declared") return Gate{};
  if (text == "all") return Gate{Gate::Kind::All, {}};
  Gate g{Gate::Kind::Named, {}};
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    if (name.empty()) break;
    g.names.push_back(name);
    start = comma + 1;
  }
  for (const auto& name : g.names) {
    const size_t colon = name.find(':');
    const std::string metric = colon == std::string::npos || name.find('.') < colon ? name : name.substr(colon + 1);
    const bool known = metric.find_first_of("*?[") != std::string::npos || find_metric(metric) ||
                       workload_metric_name(metric) || metric.starts_with("perf.");
    if (known) continue;
    std::vector<std::string> valid;
    for (const auto& m : metric_registry())
      if (std::string(m.better) != "none") valid.push_back(m.name);
    error = fmt::format("--gate: unknown metric '{}'; valid: declared, all, or metrics such as {}, workload.NAME "
                        "(harness --list names a workload's)",
                        name, fmt::join(valid, ", "));
    return std::nullopt;
  }
  if (g.names.empty() || g.names.size() != size_t(std::count(text.begin(), text.end(), ',')) + 1) {
    error = fmt::format("--gate '{}': give declared, all, or metric names separated by commas (peak_rss_kb,"
                        "after.ms_to_90pct; a pattern or WORKLOAD:METRIC for one workload's)",
                        text);
    return std::nullopt;
  }
  return g;
}

const char* gate_name(const Gate& g) {
  return g.kind == Gate::Kind::Declared ? "declared" : g.kind == Gate::Kind::All ? "all" : "named";
}

namespace {

// The ok runs of one workload by role: A, B and A'.
struct WorkloadRuns {
  std::string workload;
  Json params;  // of its first ok run
  std::vector<const RunRecord*> baseline, candidate, again;
  // The baseline's median is taken over A and A' together; A against A' is the noise floor.
  std::vector<const RunRecord*> baseline_all() const {
    std::vector<const RunRecord*> all = baseline;
    all.insert(all.end(), again.begin(), again.end());
    return all;
  }
};

// The ok runs by workload, in order of first appearance; the pins' names (of
// their first runs) and the failed runs counted into c.
std::vector<WorkloadRuns> runs_by_workload(const std::vector<RunRecord>& runs, Comparison& c,
                                           std::map<std::string, int>& failed_by_role) {
  std::vector<WorkloadRuns> out;
  std::map<std::string, size_t> index;
  for (const auto& r : runs) {
    if (r.status != Status::Ok) {
      ++c.failed_runs;
      failed_by_role[r.role == kRoleCandidate ? kRoleCandidate : kRoleBaseline]++;
      continue;
    }
    if (index.emplace(r.workload, out.size()).second) out.push_back({r.workload, r.params, {}, {}, {}});
    WorkloadRuns& w = out[index[r.workload]];
    if (r.role == kRoleBaseline) w.baseline.push_back(&r);
    if (r.role == kRoleCandidate) w.candidate.push_back(&r);
    if (r.role == kRoleBaselineAgain) w.again.push_back(&r);
    if (r.role == kRoleBaseline && c.baseline.empty()) c.baseline = r.allocator.name;
    if (r.role == kRoleCandidate && c.candidate.empty()) c.candidate = r.allocator.name;
  }
  return out;
}

// The fewest rounds and runs a side any workload had, and whether all had as
// many A, B and A' runs.
void count_runs(const std::vector<WorkloadRuns>& workloads, Comparison& c) {
  for (size_t i = 0; i < workloads.size(); ++i) {
    const WorkloadRuns& w = workloads[i];
    const int rounds = int(std::min({w.baseline.size(), w.candidate.size(), w.again.empty() ? w.baseline.size() : w.again.size()}));
    const int base_runs = int(w.baseline.size() + w.again.size()), cand_runs = int(w.candidate.size());
    const bool first = i == 0;
    c.rounds = first ? rounds : std::min(c.rounds, rounds);
    c.baseline_runs = first ? base_runs : std::min(c.baseline_runs, base_runs);
    c.candidate_runs = first ? cand_runs : std::min(c.candidate_runs, cand_runs);
    c.in_rounds = c.in_rounds && w.baseline.size() == w.candidate.size() && w.again.size() == w.candidate.size();
  }
}

// The workload whose noise floor compares the fewest runs: its A and A' counts.
std::optional<std::pair<int, int>> fewest_floor_runs(const std::vector<WorkloadRuns>& workloads) {
  std::optional<std::pair<int, int>> fewest;
  for (const auto& w : workloads)
    if (!w.again.empty() &&
        (!fewest || std::min(w.baseline.size(), w.again.size()) < size_t(std::min(fewest->first, fewest->second))))
      fewest = {int(w.baseline.size()), int(w.again.size())};
  return fewest;
}

// The metrics either side has, in first-seen order: one that only one side
// has is not compared, but said when it can regress.
std::vector<std::string> metrics_of(const std::vector<SummaryRow>& summary, const std::string& workload) {
  std::vector<std::string> metrics;
  for (const auto& row : summary)
    if (row.workload == workload && (row.role == kRoleBaseline || row.role == kRoleCandidate))
      for (const auto& [name, st] : row.metrics)
        if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) metrics.push_back(name);
  return metrics;
}

// A metric with a direction that one side has in no run: a candidate that
// never gives memory back has no time to do it.
std::string one_sided_warning(const WorkloadRuns& w, const std::string& name, size_t base_values, size_t cand_values) {
  const bool base_lacks = base_values == 0;
  const auto lacking = base_lacks ? w.baseline_all() : w.candidate;
  const std::string why = lacking.empty() ? "" : metric_reason(*lacking.front(), name);
  return fmt::format("{}: {} has {} in no run{}, the {} in {}: not compared", w.workload,
                     base_lacks ? "the baseline" : "the candidate", name, why.empty() ? "" : " (" + why + ")",
                     base_lacks ? "candidate" : "baseline", base_lacks ? cand_values : base_values);
}

// A role's values of a metric by round (repetition); false when a value of it
// never came in some run (a censored value has no ratio).
bool values_by_round(const std::vector<const RunRecord*>& runs, const std::string& metric, std::map<int, double>& out) {
  for (const RunRecord* r : runs) {
    if (auto v = metric_value(*r, metric); v && std::isfinite(*v)) out[r->repetition] = *v;
    else if (metric_above(*r, metric)) return false;
  }
  return true;
}

// How far one run moves from another of the same side in one round (see
// MetricComparison::paired_noise_floor); nullopt with fewer than 3 rounds or
// a value not above 0.
std::optional<double> scatter_within_rounds(const std::vector<double>& first, const std::vector<double>& second) {
  if (first.size() < 3) return std::nullopt;
  std::vector<double> logs;
  for (size_t k = 0; k < first.size(); ++k) {
    if (!(first[k] > 0 && second[k] > 0)) return std::nullopt;
    logs.push_back(std::log(second[k] / first[k]));
  }
  return std::expm1(1.4826 * compare::side_stats(logs).mad / std::sqrt(2.0));
}

// The change within rounds: each round's candidate against the geometric mean
// of its A and A' (A alone when the round has no A').
void set_paired(MetricComparison& m, const WorkloadRuns& w, const CompareSettings& s) {
  if (!s.paired_rounds) {
    m.paired_reason = "the runs were not made in rounds (two reports)";
    return;
  }
  std::map<int, double> a, b, again;
  if (!values_by_round(w.baseline, m.metric, a) || !values_by_round(w.candidate, m.metric, b) ||
      !values_by_round(w.again, m.metric, again)) {
    m.paired_reason = "a run's value never came";
    return;
  }
  std::vector<double> base, cand, first, second;
  for (const auto& [round, value] : b) {
    const auto in_a = a.find(round);
    if (in_a == a.end()) continue;
    const auto in_again = again.find(round);
    if (in_again != again.end()) {
      first.push_back(in_a->second);
      second.push_back(in_again->second);
    }
    const double ref = in_again == again.end() ? in_a->second
                       : in_a->second > 0 && in_again->second > 0 ? std::sqrt(in_a->second * in_again->second)
                                                                  : 0;
    base.push_back(ref);
    cand.push_back(value);
  }
  m.paired = paired_change(base, cand, 1 - s.alpha);
  if (!m.paired)
    m.paired_reason = base.size() < 2 ? "fewer than 2 rounds with both sides" : "a value is not above 0 (no ratio)";
  else
    m.paired_noise_floor = scatter_within_rounds(first, second);
}

// One metric's statistics, baseline (A and A') against candidate; the verdict
// comes later. A run whose figure never came counts at its bound for the
// scatter and the interval, and as longer than every observed figure for the
// medians and the test (Gehan's); with none, that is Mann-Whitney.
MetricComparison compare_metric(const WorkloadRuns& w, const std::string& name, const MetricRule& rule,
                                const std::vector<Observation>& bo, const std::vector<Observation>& co,
                                const CompareSettings& s, const DeclaredMetrics& declared) {
  MetricComparison m;
  m.metric = name;
  m.unit = metric_info(name, w.workload, declared).unit;
  m.rule = rule;
  m.censored = any_censored(bo) || any_censored(co);
  const std::vector<double> bv = observed_values(bo), cv = observed_values(co);
  m.baseline = censored_side_stats(bo);
  m.candidate = censored_side_stats(co);
  const auto ao = observations_of(w.again, name);
  if (!ao.empty()) {
    m.baseline_again = censored_side_stats(ao);
    m.noise_floor = std::fabs(relative_change(censored_side_stats(observations_of(w.baseline, name)).median,
                                              m.baseline_again->median));
  }
  // Two medians of five runs can agree by chance while single runs scatter
  // widely (a timing on a busy machine): the scatter of the baseline's runs
  // is a floor too, so a change must stand out from both.
  m.noise_floor = std::max(m.noise_floor, relative_spread(bv));
  // Both medians more than the run had left: neither came back, no change seen.
  const bool both_never = m.baseline.median_above && m.candidate.median_above;
  m.change = both_never ? 0 : relative_change(m.baseline.median, m.candidate.median);
  m.ci = bootstrap_change_ci(bv, cv, 1 - s.alpha, s.resamples, s.seed);
  m.p = m.censored ? gehan_p(bo, co) : mann_whitney_p(bv, cv);
  set_paired(m, w, s);
  return m;
}

// A side whose median never came, at a bound no later than the other side's
// median: its runs ended too soon to tell which is longer. Why, or "".
std::string too_soon_to_tell(const std::string& name, const std::string& unit, const SideStats& base,
                             const SideStats& cand) {
  for (auto [side, other, said, other_said] :
       {std::tuple{&base, &cand, "baseline", "candidate"}, std::tuple{&cand, &base, "candidate", "baseline"}})
    if (side->median_above && !other->median_above && side->median <= other->median)
      return fmt::format("the {0}'s {1} is more than {2:.0f} {4} (its runs ended before it came), not beyond the "
                         "{3}'s median {5:.0f} {4}: too soon to tell, not compared",
                         said, name, side->median, other_said, unit, other->median);
  return "";
}

// Whether a metric of `workload` gates the verdict: one with a direction, that
// --gate names or, by default, that the thresholds file's "gate" or else the
// workload's declared set includes.
bool gates(const std::string& workload, const std::string& metric, const MetricRule& rule, const Thresholds& t,
           const CompareSettings& s) {
  if (rule.direction == Direction::None) return false;
  auto any_matches = [&](const std::vector<std::string>& patterns) {
    return std::any_of(patterns.begin(), patterns.end(),
                       [&](const std::string& p) { return pattern_matches(p, metric, workload); });
  };
  if (s.gate.kind == Gate::Kind::All) return true;
  if (s.gate.kind == Gate::Kind::Named) return any_matches(s.gate.names);
  for (const auto& [pattern, gated] : t.gates)
    if (pattern_matches(pattern, metric, workload)) return gated;
  const auto declared = s.gated.find(workload);
  return any_matches(declared == s.gated.end() ? default_gated_metrics() : declared->second);
}

// Every metric both sides have; a warning into c for one that a side lacks.
WorkloadComparison compare_workload(const WorkloadRuns& w, const std::vector<std::string>& metrics,
                                    const Thresholds& t, const CompareSettings& s, const DeclaredMetrics& declared,
                                    Comparison& c) {
  WorkloadComparison wc;
  wc.workload = w.workload;
  wc.params = w.params;
  const auto base = w.baseline_all();
  for (const auto& name : metrics) {
    auto bo = observations_of(base, name), co = observations_of(w.candidate, name);
    const DeclaredMetric* d = find_declared(declared, w.workload, name);
    const MetricRule rule = t.rule_for(name, d ? d->better : "", w.workload);
    if (bo.empty() != co.empty() && rule.direction != Direction::None)
      c.warnings.push_back(one_sided_warning(w, name, bo.size(), co.size()));
    if (bo.empty() || co.empty()) continue;
    const std::string unit = metric_info(name, w.workload, declared).unit;
    if (auto why = too_soon_to_tell(name, unit, censored_side_stats(bo), censored_side_stats(co)); !why.empty()) {
      if (rule.direction != Direction::None) c.warnings.push_back(w.workload + ": " + why);
      continue;
    }
    wc.metrics.push_back(compare_metric(w, name, rule, bo, co, s, declared));
    wc.metrics.back().gated = gates(w.workload, name, rule, t, s);
  }
  return wc;
}

// The verdicts of a workload's metrics. A workload has several metrics that
// can regress; each alone would raise a false alarm in alpha of the
// comparisons where nothing changed, so their p-values are adjusted together
// (Holm): the gated ones as one family, the verdict's, and the reported ones
// as another. Informational metrics keep theirs. Returns "" or why no gated
// p-value can pass alpha with these many runs.
std::string judge_workload(WorkloadComparison& wc, int base_runs, int cand_runs, const CompareSettings& s) {
  std::vector<double> ps[2];  // reported, gated
  for (const auto& m : wc.metrics)
    if (m.rule.direction != Direction::None) ps[m.gated].push_back(m.p);
  const std::vector<double> adjusted[2] = {holm_adjust(ps[0]), holm_adjust(ps[1])};
  // The exact test has a smallest p-value for given sample sizes; Holm multiplies
  // the smallest by the number of tests, and if that is above alpha nothing can pass.
  const double least = smallest_p(size_t(base_runs), size_t(cand_runs));
  auto can_pass = [&](const std::vector<double>& family) {
    return family.empty() || least * double(family.size()) <= s.alpha;
  };
  size_t next[2] = {0, 0};
  for (auto& m : wc.metrics) {
    m.p_adjusted = m.rule.direction != Direction::None ? adjusted[m.gated][next[m.gated]++] : m.p;
    if (std::fabs(m.candidate.median - m.baseline.median) <= m.rule.min_delta)
      m.verdict = Verdict::NoChange;
    else
      m.verdict = decide(m.change, m.rule.threshold, m.noise_floor, m.p_adjusted, s.alpha, m.rule.direction);
    set_resolution(m, can_pass(ps[m.gated]), base_runs, cand_runs);
  }
  const std::vector<double>& family = ps[1].empty() ? ps[0] : ps[1];
  if (can_pass(family)) return "";
  return fmt::format("with {} baseline and {} candidate runs the smallest p-value the test can give is {:.2g}, {:.2g} "
                     "after the Holm adjustment over {} metrics: above alpha {}, so no metric can be called a regression",
                     base_runs, cand_runs, least, std::min(1.0, least * double(family.size())), family.size(), s.alpha);
}

// One warning per distinct reason no p-value can pass, naming the workloads
// unless it holds for all. `powerless`: workload, why.
std::vector<std::string> powerless_warnings(const std::vector<std::pair<std::string, std::string>>& powerless,
                                            size_t workloads) {
  std::vector<std::string> out;
  for (size_t i = 0; i < powerless.size(); ++i) {
    std::vector<std::string> names;
    for (const auto& [w, why] : powerless)
      if (why == powerless[i].second) names.push_back(w);
    if (names.front() != powerless[i].first) continue;  // said already
    out.push_back(names.size() == workloads ? powerless[i].second
                                            : fmt::format("{}: {}", fmt::join(names, ", "), powerless[i].second));
  }
  return out;
}

// What the comparison as a whole lacks: runs for a noise floor, failed runs.
void warn_of_few_and_failed_runs(const std::vector<WorkloadRuns>& workloads, Comparison& c) {
  if (auto floor = fewest_floor_runs(workloads); floor && std::min(floor->first, floor->second) < kMinRounds)
    c.warnings.push_back(fmt::format("the noise floor compares {} run{} of the baseline with {} of the baseline again, "
                                     "fewer than {}: a rough guess",
                                     floor->first, floor->first == 1 ? "" : "s", floor->second, kMinRounds));
  if (c.failed_runs > 0)
    c.warnings.push_back(fmt::format("{} run{} failed and {} left out (see the runs report)", c.failed_runs,
                                     c.failed_runs == 1 ? "" : "s", c.failed_runs == 1 ? "is" : "are"));
}

}  // namespace

Comparison analyze(const std::vector<RunRecord>& runs, const Thresholds& t, const CompareSettings& s,
                   const DeclaredMetrics& declared) {
  Comparison c;
  c.alpha = s.alpha;
  c.gate = gate_name(s.gate);
  std::map<std::string, int> failed;  // by side
  const std::vector<WorkloadRuns> workloads = runs_by_workload(runs, c, failed);
  if (c.failed_runs > 0)
    c.incomplete = fmt::format("{} run{} failed: {} of the baseline, {} of the candidate", c.failed_runs,
                               c.failed_runs == 1 ? "" : "s", failed[kRoleBaseline], failed[kRoleCandidate]);
  count_runs(workloads, c);
  const std::vector<SummaryRow> summary = summarize_runs(runs);
  std::vector<std::pair<std::string, std::string>> powerless;  // workload, why no p-value can pass
  for (const auto& w : workloads) {
    WorkloadComparison wc = compare_workload(w, metrics_of(summary, w.workload), t, s, declared, c);
    const std::string why = judge_workload(wc, int(w.baseline.size() + w.again.size()), int(w.candidate.size()), s);
    if (!why.empty()) powerless.push_back({w.workload, why});
    c.workloads.push_back(std::move(wc));
  }
  for (auto& warning : powerless_warnings(powerless, c.workloads.size())) c.warnings.push_back(std::move(warning));
  warn_of_few_and_failed_runs(workloads, c);
  return c;
}

std::string sample_size(const Comparison& c) {
  if (c.in_rounds) return fmt::format("{} round{}", c.rounds, c.rounds == 1 ? "" : "s");
  if (c.baseline_runs == c.candidate_runs)
    return fmt::format("{} run{} a side", c.baseline_runs, c.baseline_runs == 1 ? "" : "s");
  return fmt::format("{} baseline and {} candidate runs", c.baseline_runs, c.candidate_runs);
}

}  // namespace mh
