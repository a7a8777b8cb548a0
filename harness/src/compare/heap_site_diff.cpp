// The call sites whose live bytes changed between two sides (see heap_site_diff.h).
#include "compare/heap_site_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "compare/compare.h"
#include "core/escape.h"
#include "core/heap_sites.h"
#include "core/stats.h"
#include "core/units.h"

namespace mh {

namespace {

// How many combined standard errors a difference must pass to be shown.
constexpr double kStandardErrors = 3;

struct SiteSum {
  double bytes = 0, var = 0;
  std::string label;
};
// One run's sites at its peak by key (sites of one key summed).
using RunSites = std::map<std::string, SiteSum>;

RunSites sites_of(const RunRecord& r) {
  RunSites out;
  for (const auto& s : peak_sites(r)->top) {
    auto& sum = out[site_key(s, r.allocator.library)];
    sum.bytes += s.bytes;
    sum.var += s.stderr_bytes * s.stderr_bytes;
    if (sum.label.empty()) sum.label = site_label(s, r.allocator.library);
  }
  return out;
}

struct Sides {
  std::vector<RunSites> baseline, candidate;
};

// A side's estimate of a site: the mean over its runs, and the standard error of
// that mean, sqrt(sum of se^2) / n. Each round samples with a seed of its own
// (derived from --seed and the round, plan.h), so the runs' sampling errors are
// independent and the estimate tightens with more rounds. A run without the
// site holds none of it: 0 and 0.
std::pair<double, double> side_estimate(const std::vector<RunSites>& side, const std::string& key) {
  if (side.empty()) return {0, 0};
  double bytes = 0, var = 0;
  for (const auto& run : side) {
    auto it = run.find(key);
    if (it == run.end()) continue;
    bytes += it->second.bytes;
    var += it->second.var;
  }
  const double n = double(side.size());
  return {bytes / n, std::sqrt(var) / n};
}

void changes_of(const std::string& workload, const Sides& s, size_t top, std::vector<SiteChange>& out) {
  std::map<std::string, std::string> labels;  // key -> label, over both sides
  for (const auto* side : {&s.baseline, &s.candidate})
    for (const auto& run : *side)
      for (const auto& [key, sum] : run) labels.emplace(key, sum.label);
  std::vector<SiteChange> found;
  for (const auto& [key, label] : labels) {
    SiteChange c;
    c.workload = workload;
    c.site = key;
    c.label = label;
    std::tie(c.baseline_bytes, c.baseline_stderr) = side_estimate(s.baseline, key);
    std::tie(c.candidate_bytes, c.candidate_stderr) = side_estimate(s.candidate, key);
    c.baseline_runs = int(s.baseline.size());
    c.candidate_runs = int(s.candidate.size());
    const double combined = std::hypot(c.baseline_stderr, c.candidate_stderr);
    if (std::fabs(c.candidate_bytes - c.baseline_bytes) > kStandardErrors * combined) found.push_back(std::move(c));
  }
  auto size = [](const SiteChange& c) { return std::fabs(c.candidate_bytes - c.baseline_bytes); };
  std::stable_sort(found.begin(), found.end(), [&](const auto& a, const auto& b) { return size(a) > size(b); });
  if (found.size() > top) found.resize(top);
  out.insert(out.end(), found.begin(), found.end());
}

}  // namespace

std::vector<SiteChange> heap_site_changes(const std::vector<RunRecord>& runs, size_t top) {
  std::vector<std::string> order;
  std::map<std::string, Sides> by_workload;
  for (const auto& r : runs) {
    if (r.status != Status::Ok || !peak_sites(r)) continue;
    if (!by_workload.count(r.workload)) order.push_back(r.workload);
    auto& sides = by_workload[r.workload];
    if (r.role == kRoleCandidate) sides.candidate.push_back(sites_of(r));
    else if (r.role == kRoleBaseline || r.role == kRoleBaselineAgain) sides.baseline.push_back(sites_of(r));
  }
  std::vector<SiteChange> out;
  for (const auto& w : order)
    if (!by_workload[w].baseline.empty() && !by_workload[w].candidate.empty()) changes_of(w, by_workload[w], top, out);
  return out;
}

Json heap_site_changes_json(const std::vector<SiteChange>& changes) {
  Json out = Json::array();
  auto side = [](double bytes, double stderr_bytes, int runs) {
    return Json{{"bytes", std::llround(bytes)}, {"stderr_bytes", std::llround(stderr_bytes)}, {"runs", runs}};
  };
  for (const auto& c : changes)
    out.push_back(Json{{"workload", c.workload},
                       {"site", c.site},
                       {"baseline", side(c.baseline_bytes, c.baseline_stderr, c.baseline_runs)},
                       {"candidate", side(c.candidate_bytes, c.candidate_stderr, c.candidate_runs)},
                       {"change_bytes", std::llround(c.candidate_bytes - c.baseline_bytes)}});
  return out;
}

std::string heap_site_changes_table(const std::vector<SiteChange>& changes) {
  if (changes.empty()) return "";
  std::string out = fmt::format(
      "\ncall sites of the live heap at the peak that changed by more than {:g} standard errors\n"
      "(MB, each side's mean over its runs, each round sampled with its own seed, and the standard error of "
      "that mean):\n",
      kStandardErrors);
  const DisplayUnit mb = display_unit("bytes");
  std::string workload;
  bool stripped = false;
  for (const auto& c : changes) {
    stripped = stripped || c.label.find(kDynsymMark) != std::string::npos;
    if (c.workload != workload) out += escape::terminal(workload = c.workload) + ":\n";
    const double change = c.candidate_bytes - c.baseline_bytes;
    out += fmt::format("  {:>9}  {} ± {} -> {} ± {}  {}\n", fmt::format("{}{}", change > 0 ? "+" : "", display_number(change, mb)),
                       display_number(c.baseline_bytes, mb), display_number(c.baseline_stderr, mb),
                       display_number(c.candidate_bytes, mb), display_number(c.candidate_stderr, mb),
                       escape::terminal(c.label));
  }
  if (stripped) out += stripped_names_note();
  return out;
}

std::string heap_site_changes_markdown(const std::vector<SiteChange>& changes) {
  if (changes.empty()) return "";
  std::string out = fmt::format(
      "\n#### Call sites of the live heap at the peak that changed by more than {:g} standard errors\n\n"
      "| workload | change MB | baseline MB | candidate MB | site |\n| --- | ---: | ---: | ---: | --- |\n",
      kStandardErrors);
  const DisplayUnit mb = display_unit("bytes");
  bool stripped = false;
  for (const auto& c : changes) {
    stripped = stripped || c.label.find(kDynsymMark) != std::string::npos;
    const double change = c.candidate_bytes - c.baseline_bytes;
    out += fmt::format("| {} | {}{} | {} ± {} | {} ± {} | {} |\n", escape::markdown(c.workload), change > 0 ? "+" : "",
                       display_number(change, mb), display_number(c.baseline_bytes, mb),
                       display_number(c.baseline_stderr, mb), display_number(c.candidate_bytes, mb),
                       display_number(c.candidate_stderr, mb), escape::markdown(c.label));
  }
  out += "\nEach side: the mean over its runs (each round sampled with its own seed) ± the standard error of that "
         "mean.\n";
  if (stripped) out += fmt::format("\n{}", escape::markdown(stripped_names_note()));
  return out;
}

}  // namespace mh
