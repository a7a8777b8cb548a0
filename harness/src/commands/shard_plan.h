// Shards balanced by expected duration in a command (`--shard I/N
// --shard-durations REPORT|STORE`): the durations read, the plan cut to the
// shard's units (inputs/balance.h), and the plan printed by --dry-run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands/execute.h"
#include "inputs/balance.h"

namespace mh {

// The expected time of each run, from a report (or merged shards: the mean
// wall time of each workload under each allocator) or a history store (the
// mean over its revisions). nullopt with the error naming the file.
std::optional<Durations> read_durations(const std::string& path, std::string& error);

struct BalancedPlan {
  Shard shard;
  bool by_round = false;  // a comparison's units are its rounds
  std::vector<ShardUnit> units;
  std::vector<int> shard_of;  // each unit's 0-based shard
  std::string source;
};

// Cuts e.plan (the whole suite's) to shard `shard` ("I/N") of the units
// balanced by `durations`; records how in the plan ("shard_by"). False with
// the error on bad input (a shard with no runs).
std::optional<BalancedPlan> cut_balanced(Execution& e, const std::string& shard, const Durations& durations,
                                         bool by_round, std::string& error);

// --dry-run: the runs of the plan, and with a balanced plan every shard's
// expected time against the split by entry.
std::string plan_text(const Execution& e, const std::optional<BalancedPlan>& balanced, const std::string& shard);

}  // namespace mh
