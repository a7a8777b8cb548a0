// Comparison analysis and thresholds (see compare.h).
#include "compare/compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "core/summary.h"

namespace mh {

using namespace compare;

MetricRule Thresholds::rule_for(const std::string& metric, const std::string& declared_better) const {
  for (const auto& [pattern, rule] : rules)
    if (fnmatch(pattern.c_str(), metric.c_str(), 0) == 0) return rule;
  if (const MetricSpec* spec = find_metric(metric))
    return MetricRule{direction_from(spec->better), spec->threshold, spec->min_delta};
  MetricRule r = fallback;
  if (!declared_better.empty()) r.direction = direction_from(declared_better);
  return r;
}

namespace {

bool read_rule(const Json& j, MetricRule& r, std::string& error, const std::string& where) {
  if (!j.is_object()) {
    error = where + ": expected an object";
    return false;
  }
  if (j.contains("better")) {
    std::string b = j["better"].get<std::string>();
    if (b != "lower" && b != "higher" && b != "none") {
      error = where + ": bad \"better\" '" + b + "'; valid: lower, higher, none";
      return false;
    }
    r.direction = direction_from(b);
  }
  r.threshold = j.value("threshold", r.threshold);
  r.min_delta = j.value("min_delta", r.min_delta);
  if (!(r.threshold >= 0) || !(r.min_delta >= 0)) {
    error = where + ": threshold and min_delta must be >= 0";
    return false;
  }
  return true;
}

std::vector<double> values_of(const std::vector<const RunRecord*>& runs, const std::string& metric) {
  std::vector<double> out;
  for (const RunRecord* r : runs)
    if (auto v = metric_value(*r, metric); v && std::isfinite(*v)) out.push_back(*v);
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
  std::ifstream in(path);
  if (!in) {
    error = "cannot read the thresholds file " + path;
    return std::nullopt;
  }
  Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    error = "the thresholds file " + path + " is not JSON";
    return std::nullopt;
  }
  Thresholds t;
  if (j.contains("default") && !read_rule(j["default"], t.fallback, error, path + ": default")) return std::nullopt;
  const Json metrics = j.value("metrics", Json::object());  // items() must not outlive it
  for (const auto& [k, v] : metrics.items()) {
    MetricRule r = t.fallback;
    if (!read_rule(v, r, error, path + ": " + k)) return std::nullopt;
    t.rules.push_back({k, r});
  }
  return t;
}

bool Comparison::regressed() const {
  for (const auto& w : workloads)
    for (const auto& m : w.metrics)
      if (m.verdict == Verdict::Regression) return true;
  return false;
}

Comparison analyze(const std::vector<RunRecord>& runs, const Thresholds& t, const CompareSettings& s,
                   const DeclaredMetrics& declared) {
  Comparison c;
  c.alpha = s.alpha;
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, std::vector<const RunRecord*>>> by_workload;  // workload -> role -> runs
  std::map<std::string, Json> params;
  for (const auto& r : runs) {
    if (r.status != Status::Ok) {
      ++c.failed_runs;
      continue;
    }
    if (!by_workload.count(r.workload)) {
      order.push_back(r.workload);
      params[r.workload] = r.params;
    }
    by_workload[r.workload][r.role].push_back(&r);
    if (r.role == kRoleBaseline && c.baseline.empty()) c.baseline = r.allocator.name;
    if (r.role == kRoleCandidate && c.candidate.empty()) c.candidate = r.allocator.name;
  }
  c.rounds = -1;
  int floor_runs[2] = {-1, -1};  // A and A' of the workload whose noise floor had the fewest
  std::vector<std::pair<std::string, std::string>> powerless;  // workload, why no p-value can pass
  for (const auto& w : order) {
    auto& roles = by_workload[w];
    const auto& base_only = roles[kRoleBaseline];
    const auto& cand = roles[kRoleCandidate];
    const auto& again = roles[kRoleBaselineAgain];
    int have = int(std::min({base_only.size(), cand.size(), again.empty() ? base_only.size() : again.size()}));
    const bool first = c.rounds < 0;
    c.rounds = first ? have : std::min(c.rounds, have);
    const int base_runs = int(base_only.size() + again.size()), cand_runs = int(cand.size());
    c.baseline_runs = first ? base_runs : std::min(c.baseline_runs, base_runs);
    c.candidate_runs = first ? cand_runs : std::min(c.candidate_runs, cand_runs);
    c.in_rounds = c.in_rounds && base_only.size() == cand.size() && again.size() == cand.size();
    if (!again.empty() && (floor_runs[0] < 0 || std::min(base_only.size(), again.size()) <
                                                    size_t(std::min(floor_runs[0], floor_runs[1]))))
      floor_runs[0] = int(base_only.size()), floor_runs[1] = int(again.size());
    // The baseline's median is taken over A and A' together; A against A' is the noise floor.
    std::vector<const RunRecord*> base = base_only;
    base.insert(base.end(), again.begin(), again.end());

    WorkloadComparison wc;
    wc.workload = w;
    wc.params = params[w];
    // The metrics either side has: one that only one side has is not compared,
    // but said when it can regress (a candidate that never gives memory back
    // has no time to do it).
    std::vector<std::string> metrics;
    for (const auto& row : summarize_runs(runs))
      if (row.workload == w && (row.role == kRoleBaseline || row.role == kRoleCandidate))
        for (const auto& [name, st] : row.metrics)
          if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) metrics.push_back(name);
    for (const auto& name : metrics) {
      auto bv = values_of(base, name), cv = values_of(cand, name);
      std::string declared_better;
      if (auto it = declared.find(w); it != declared.end() && name.rfind("workload.", 0) == 0)
        if (auto d = it->second.find(name.substr(9)); d != it->second.end()) declared_better = d->second.better;
      const MetricRule rule = t.rule_for(name, declared_better);
      if (bv.empty() != cv.empty() && rule.direction != Direction::None) {
        const bool base_lacks = bv.empty();
        const auto& lacking = base_lacks ? base : cand;
        std::string why = lacking.empty() ? "" : metric_reason(*lacking.front(), name);
        c.warnings.push_back(fmt::format("{}: {} has {} in no run{}, the {} in {}: not compared", w,
                                         base_lacks ? "the baseline" : "the candidate", name,
                                         why.empty() ? "" : " (" + why + ")", base_lacks ? "candidate" : "baseline",
                                         base_lacks ? cv.size() : bv.size()));
      }
      if (bv.empty() || cv.empty()) continue;
      MetricComparison m;
      m.metric = name;
      m.unit = metric_info(name, w, declared).unit;
      m.rule = rule;
      m.baseline = side_stats(bv);
      m.candidate = side_stats(cv);
      auto av = values_of(again, name), b1 = values_of(base_only, name);
      if (!av.empty()) {
        m.baseline_again = side_stats(av);
        m.noise_floor = noise_floor(b1, av);
      }
      // Two medians of five runs can agree by chance while single runs scatter
      // widely (a timing on a busy machine): the scatter of the baseline's runs
      // is a floor too, so a change must stand out from both.
      m.noise_floor = std::max(m.noise_floor, relative_spread(bv));
      m.change = relative_change(m.baseline.median, m.candidate.median);
      m.ci = bootstrap_change_ci(bv, cv, 1 - s.alpha, s.resamples, s.seed);
      m.p = mann_whitney_p(bv, cv);
      wc.metrics.push_back(std::move(m));
    }
    // A workload has several metrics that can regress; each alone would raise a
    // false alarm in alpha of the comparisons where nothing changed, so their
    // p-values are adjusted together (Holm). Informational metrics keep theirs.
    std::vector<double> ps;
    for (const auto& m : wc.metrics)
      if (m.rule.direction != Direction::None) ps.push_back(m.p);
    auto adjusted = holm_adjust(ps);
    // The exact test has a smallest p-value for given sample sizes; Holm multiplies
    // the smallest by the number of tests, and if that is above alpha nothing can pass.
    const double least = smallest_p(size_t(base_runs), size_t(cand_runs));
    const bool can_pass = ps.empty() || least * double(ps.size()) <= s.alpha;
    if (!can_pass)
      powerless.push_back({w, fmt::format("with {} baseline and {} candidate runs the smallest p-value the test can give "
                                          "is {:.2g}, {:.2g} after the Holm adjustment over {} metrics: above alpha {}, "
                                          "so no metric can be called a regression",
                                          base_runs, cand_runs, least, std::min(1.0, least * double(ps.size())),
                                          ps.size(), s.alpha)});
    size_t next = 0;
    for (auto& m : wc.metrics) {
      m.p_adjusted = m.rule.direction != Direction::None ? adjusted[next++] : m.p;
      if (std::fabs(m.candidate.median - m.baseline.median) <= m.rule.min_delta)
        m.verdict = Verdict::NoChange;
      else
        m.verdict = decide(m.change, m.rule.threshold, m.noise_floor, m.p_adjusted, s.alpha, m.rule.direction);
      set_resolution(m, can_pass, base_runs, cand_runs);
    }
    c.workloads.push_back(std::move(wc));
  }
  if (c.rounds < 0) c.rounds = 0;
  // One warning per distinct reason, naming the workloads unless it holds for all.
  for (size_t i = 0; i < powerless.size(); ++i) {
    std::vector<std::string> names;
    for (const auto& [w, why] : powerless)
      if (why == powerless[i].second) names.push_back(w);
    if (names.front() != powerless[i].first) continue;  // said already
    c.warnings.push_back(names.size() == c.workloads.size() ? powerless[i].second
                                                            : fmt::format("{}: {}", fmt::join(names, ", "), powerless[i].second));
  }
  if (floor_runs[0] >= 0 && std::min(floor_runs[0], floor_runs[1]) < kMinRounds)
    c.warnings.push_back(fmt::format("the noise floor compares {} run{} of the baseline with {} of the baseline again, "
                                     "fewer than {}: a rough guess",
                                     floor_runs[0], floor_runs[0] == 1 ? "" : "s", floor_runs[1], kMinRounds));
  if (c.failed_runs > 0)
    c.warnings.push_back(fmt::format("{} run{} failed and {} left out (see the runs report)", c.failed_runs,
                                     c.failed_runs == 1 ? "" : "s", c.failed_runs == 1 ? "is" : "are"));
  return c;
}

std::string sample_size(const Comparison& c) {
  if (c.in_rounds) return fmt::format("{} round{}", c.rounds, c.rounds == 1 ? "" : "s");
  if (c.baseline_runs == c.candidate_runs)
    return fmt::format("{} run{} a side", c.baseline_runs, c.baseline_runs == 1 ? "" : "s");
  return fmt::format("{} baseline and {} candidate runs", c.baseline_runs, c.candidate_runs);
}

}  // namespace mh
