// Shards balanced by expected duration (see balance.h).
#include "inputs/balance.h"

#include <algorithm>
#include <numeric>

namespace mh {

double expected_ms(const Durations& d, const std::string& workload, const std::string& allocator) {
  if (auto it = d.per_run_ms.find({workload, allocator}); it != d.per_run_ms.end()) return it->second;
  double sum = 0, all = 0;
  int n = 0, n_all = 0;
  for (const auto& [key, ms] : d.per_run_ms) {
    all += ms, ++n_all;
    if (key.first == workload) sum += ms, ++n;
  }
  if (n > 0) return sum / n;
  return n_all > 0 ? all / n_all : 1.0;
}

namespace {

size_t key_of(const PlannedRun& r, bool by_round) { return by_round ? size_t(r.repetition) : r.arm; }

size_t unit_of(const std::vector<ShardUnit>& units, const PlannedRun& r, bool by_round) {
  for (size_t u = 0; u < units.size(); ++u)
    if (units[u].job == r.job && units[u].key == key_of(r, by_round)) return u;
  return units.size();
}

}  // namespace

std::vector<ShardUnit> plan_units(const std::vector<PlannedRun>& plan, bool by_round,
                                  const std::vector<double>& run_ms) {
  std::vector<ShardUnit> units;
  for (size_t i = 0; i < plan.size(); ++i) {
    size_t u = unit_of(units, plan[i], by_round);
    if (u == units.size()) units.push_back(ShardUnit{plan[i].job, key_of(plan[i], by_round), 0});
    units[u].ms += run_ms[i];
  }
  return units;
}

std::vector<int> balance_units(const std::vector<ShardUnit>& units, int shards) {
  std::vector<size_t> order(units.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return units[a].ms > units[b].ms; });
  std::vector<double> load(size_t(std::max(shards, 1)), 0.0);
  std::vector<int> shard_of(units.size(), 0);
  for (size_t u : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    shard_of[u] = int(least);
    load[size_t(least)] += units[u].ms;
  }
  return shard_of;
}

std::vector<PlannedRun> select_balanced(const std::vector<PlannedRun>& plan, bool by_round,
                                        const std::vector<ShardUnit>& units, const std::vector<int>& shard_of,
                                        Shard s) {
  std::vector<PlannedRun> out;
  for (const auto& r : plan)
    if (size_t u = unit_of(units, r, by_round); u < units.size() && shard_of[u] == s.index - 1) out.push_back(r);
  return out;
}

std::vector<double> shard_loads(const std::vector<ShardUnit>& units, const std::vector<int>& shard_of, int shards) {
  std::vector<double> load(size_t(shards), 0.0);
  for (size_t u = 0; u < units.size(); ++u) load[size_t(shard_of[u])] += units[u].ms;
  return load;
}

std::vector<double> entry_split_loads(const std::vector<ShardUnit>& units, int shards) {
  std::vector<double> load(size_t(shards), 0.0);
  for (const auto& u : units) load[u.job % size_t(shards)] += u.ms;
  return load;
}

}  // namespace mh
