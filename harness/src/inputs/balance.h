// Shards balanced by expected duration: a plan cut into units smaller than a
// suite entry (an entry's runs under one allocator; in a comparison, one
// round of an entry with all its sides, so that each round's baseline and
// candidate run on one machine), the longest unit first into the least loaded
// shard. Pure functions.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "inputs/plan.h"

namespace mh {

// The expected wall time of one run, in ms, by workload (as it runs) and allocator label.
struct Durations {
  std::map<std::pair<std::string, std::string>, double> per_run_ms;
  std::string source;  // the report or store it was read from
};
// A run's expected ms: its own workload and allocator, else its workload's
// mean over allocators (a pin's other revision), else the mean of every run
// known, else 1 (nothing known: balanced by count).
double expected_ms(const Durations& d, const std::string& workload, const std::string& allocator);

struct ShardUnit {
  size_t job = 0;
  size_t key = 0;  // the arm of a plain run's unit, the round of a comparison's
  double ms = 0;   // the expected time of its runs
};

// The plan's units in the order they first appear; `by_round`: a
// comparison's (job, round), else (job, arm). `ms_of` is one run's expected ms.
std::vector<ShardUnit> plan_units(const std::vector<PlannedRun>& plan, bool by_round,
                                  const std::vector<double>& run_ms);

// Longest first into the least loaded of `shards` (ties: the lower shard, the
// earlier unit): the 0-based shard of each unit. Deterministic.
std::vector<int> balance_units(const std::vector<ShardUnit>& units, int shards);

// The runs of the plan whose unit is in shard `s` (1-based), in the plan's order.
std::vector<PlannedRun> select_balanced(const std::vector<PlannedRun>& plan, bool by_round,
                                        const std::vector<ShardUnit>& units, const std::vector<int>& shard_of,
                                        Shard s);

// Every shard's expected ms: balanced (units as assigned) and as --shard I/N
// splits without durations (every N-th entry).
std::vector<double> shard_loads(const std::vector<ShardUnit>& units, const std::vector<int>& shard_of, int shards);
std::vector<double> entry_split_loads(const std::vector<ShardUnit>& units, int shards);

}  // namespace mh
