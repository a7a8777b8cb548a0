// Run metrics and summaries (see summary.h). Pure functions.
#include "core/summary.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/metrics.h"

namespace mh {

const stats::Summary* SummaryRow::find(const std::string& metric) const {
  for (const auto& [name, s] : metrics)
    if (name == metric) return &s;
  return nullptr;
}

const MetricRuns* SummaryRow::find_runs(const std::string& metric) const {
  for (const auto& [name, r] : runs)
    if (name == metric) return &r;
  return nullptr;
}

std::vector<SummaryRow> summarize_runs(const std::vector<RunRecord>& runs) {
  std::vector<SummaryRow> rows;
  // A row per workload, allocator and role; the same pin in two roles (A/A') stays apart.
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::vector<const RunRecord*>> groups;
  for (const auto& r : runs) {
    Key key{r.workload, r.allocator.name, r.role};
    if (!groups.count(key)) {
      SummaryRow row;
      row.workload = r.workload;
      row.allocator = r.allocator.name;
      row.role = r.role;
      rows.push_back(std::move(row));
    }
    groups[key].push_back(&r);
  }
  for (auto& row : rows) {
    const auto& members = groups[{row.workload, row.allocator, row.role}];
    row.runs_total = members.size();
    // Metric name -> figures of the ok runs, in first-seen order.
    std::vector<std::pair<std::string, MetricRuns>> values;
    auto add = [&](const std::string& name, const Maybe& v) {
      auto it = std::find_if(values.begin(), values.end(), [&](auto& p) { return p.first == name; });
      if (it == values.end()) {
        values.push_back({name, {}});
        it = values.end() - 1;
      }
      if (v.value) it->second.values.push_back(*v.value);
      else if (v.above) it->second.above.push_back(*v.above);
    };
    for (const RunRecord* r : members) {
      if (r->status != Status::Ok) continue;
      ++row.runs_ok;
      for (const auto& m : run_metrics(*r)) add(m.name, m.value);
    }
    for (auto& [name, v] : values) {
      if (auto s = stats::summarize(v.values)) row.metrics.push_back({name, *s});
      if (!v.values.empty() || !v.above.empty()) row.runs.push_back({name, std::move(v)});
    }
  }
  return rows;
}

}  // namespace mh
