// Balanced shards and the printed plan (see shard_plan.h).
#include "commands/shard_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <numeric>

#include "core/units.h"
#include "history/store.h"

namespace mh {

namespace {

bool is_sqlite(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char head[16] = {0};
  f.read(head, sizeof head);
  return f && std::string(head, 15) == "SQLite format 3";
}

std::optional<Durations> store_durations(const std::string& path, std::string& error) {
  auto store = history::Store::open(path, error);
  if (!store) return std::nullopt;
  auto series = store->series(history::SeriesFilter{"wall_ms", "", "", ""}, error);
  if (!series) return std::nullopt;
  Durations d{{}, path};
  std::map<std::pair<std::string, std::string>, std::pair<double, int>> sums;
  for (const auto& s : *series)
    for (const auto& p : s.points)
      for (const auto& v : p.values) {
        auto& [sum, n] = sums[{s.workload, s.allocator}];
        sum += v.value, ++n;
      }
  for (const auto& [key, sn] : sums) d.per_run_ms[key] = sn.first / sn.second;
  return d;
}

std::string shown_number(double v) { return display_number(v, DisplayUnit{"", 1.0}); }

double mean(const std::vector<double>& v) { return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); }

}  // namespace

std::optional<Durations> read_durations(const std::string& path, std::string& error) {
  std::optional<Durations> out;
  if (is_sqlite(path)) {
    out = store_durations(path, error);
  } else if (auto report = read_report(path, error)) {
    out = Durations{{}, path};
    std::map<std::pair<std::string, std::string>, std::pair<double, int>> sums;
    for (const auto& r : report->runs)
      if (r.wall_ms > 0) {
        auto& [sum, n] = sums[{r.workload, r.allocator.name}];
        sum += r.wall_ms, ++n;
      }
    for (const auto& [key, sn] : sums) out->per_run_ms[key] = sn.first / sn.second;
  }
  if (!out) {
    error = "--shard-durations: " + error;
    return std::nullopt;
  }
  if (out->per_run_ms.empty()) {
    error = "--shard-durations: " + path + " holds no run with a wall time";
    return std::nullopt;
  }
  return out;
}

std::optional<BalancedPlan> cut_balanced(Execution& e, const std::string& shard, const Durations& durations,
                                         bool by_round, std::string& error) {
  auto s = parse_shard(shard, error);
  if (!s) return std::nullopt;
  std::vector<double> run_ms;
  for (const auto& r : e.plan)
    run_ms.push_back(expected_ms(durations, e.jobs[r.job].workload.name, e.arms[r.arm].allocator.label));
  BalancedPlan b{*s, by_round, plan_units(e.plan, by_round, run_ms), {}, durations.source};
  b.shard_of = balance_units(b.units, s->count);
  auto cut = select_balanced(e.plan, by_round, b.units, b.shard_of, *s);
  if (cut.empty()) {
    error = fmt::format("shard {} has no runs: the plan has {} units ({}) for {} shards", shard, b.units.size(),
                        by_round ? "an entry's rounds" : "an entry's allocators", s->count);
    return std::nullopt;
  }
  e.plan = std::move(cut);
  return b;
}

std::string plan_text(const Execution& e, const std::optional<BalancedPlan>& balanced, const std::string& shard) {
  std::string out = fmt::format("plan{}: {} runs\n", shard.empty() ? "" : " of shard " + shard, e.plan.size());
  for (const auto& r : e.plan)
    out += fmt::format("  {}  {}{}  round {}\n", e.jobs[r.job].workload.name, e.arms[r.arm].allocator.label,
                       e.arms[r.arm].role.empty() ? "" : " (" + e.arms[r.arm].role + ")", r.repetition);
  if (!balanced) return out;
  const auto& b = *balanced;
  const auto loads = shard_loads(b.units, b.shard_of, b.shard.count);
  const auto by_entry = entry_split_loads(b.units, b.shard.count);
  double largest = 0;
  for (const auto& u : b.units) largest = std::max(largest, u.ms);
  out += fmt::format("expected time from {} ({} units: {}):\n", b.source, b.units.size(),
                     b.by_round ? "an entry's rounds" : "an entry's allocators");
  for (size_t i = 0; i < loads.size(); ++i)
    out += fmt::format("  shard {}/{}  {} ms (by entry: {} ms)\n", i + 1, loads.size(), shown_number(loads[i]),
                       shown_number(by_entry[i]));
  const double m = mean(loads);
  out += fmt::format("longest over mean: {} balanced, {} by entry; largest unit over mean {}\n",
                     shown_number(*std::max_element(loads.begin(), loads.end()) / m),
                     shown_number(*std::max_element(by_entry.begin(), by_entry.end()) / m), shown_number(largest / m));
  return out;
}

}  // namespace mh
