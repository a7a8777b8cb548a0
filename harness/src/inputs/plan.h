// What to run: jobs (a workload with its parameters), arms (an allocator in a
// role), and the interleaved order of runs. Also suites and shards. Pure
// functions except load_suite, which reads a file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "inputs/allocators.h"
#include "inputs/program.h"
#include "core/record.h"
#include "inputs/workloads.h"

namespace mh {

struct Job {
  WorkloadInfo workload;
  std::vector<std::string> args = {};  // as given, passed to the workload
  Json params = Json();                // resolved by the workload's own declaration
  std::optional<Program> program = {};  // set for any program (harness -- PROGRAM ARGS)
  bool ledger = false;  // its runs with the heap ledger (a suite entry's "ledger": true)
};

// The metrics declared by these jobs' workloads, under the name each job runs
// as (a suite entry may rename its workload).
DeclaredMetrics declared_by_jobs(const std::vector<Job>& jobs);
// The metrics that gate a comparison of these jobs by default, by the name each runs as.
GatedMetrics gated_by_jobs(const std::vector<Job>& jobs);

struct Arm {
  AllocatorSpec allocator;
  std::string role;  // "" for a plain run; baseline, candidate, baseline-again in a comparison
  // Two commands compared under one allocator: the program this arm runs in
  // place of the job's, its results under the job's name so that both sides
  // meet in one table. Unset: the job's.
  std::optional<Program> program = {};
  // This arm's own --memory-limit in bytes (harness squeeze: unlimited and
  // limited arms of one allocator); 0: the execution's.
  uint64_t memory_limit = 0;
};

struct PlannedRun {
  size_t job = 0, arm = 0;
  int repetition = 1;  // 1-based round
};

// Takes out of `plan` the runs of a program under an allocator family it
// declares it cannot run under (Program::not_under); returns what was left out,
// one {"workload", "allocator", "why"} per job and arm.
Json leave_out_unsupported(const std::vector<Job>& jobs, const std::vector<Arm>& arms, std::vector<PlannedRun>& plan);

// Round by round, job by job, every arm once: A B C, A B C, ... With a seed, the
// order of the arms is shuffled in each round and job (recorded in the report).
// The ledger's sampling seed of one round: derived from --seed (or a fixed base
// without it) and the round, so that each round samples other allocations while
// a round's baseline and candidate sample the same ones, and a rerun with the
// same --seed samples as before.
uint64_t round_seed(std::optional<uint64_t> seed, int round);

std::vector<PlannedRun> interleave(size_t jobs, size_t arms, int rounds, std::optional<uint64_t> shuffle_seed);

struct SuiteEntry {
  std::string workload;
  std::vector<std::string> args;
  Json command;  // a program's entry ({"command": [...], "name": ...}, program.h); null for a workload
  // What its results are called: the workload's name unless the entry names
  // itself (a suite that runs a workload twice must, to keep them apart).
  std::string name = "";
  bool ledger = false;  // "ledger": true
};
// Reads suite `name` from a suites file ({"suites": {"quick": {"about": ..., "runs": [...]}}}).
// On error returns nullopt with a message naming the bad value and the valid ones.
std::optional<std::vector<SuiteEntry>> load_suite(const std::string& path, const std::string& name, std::string& error);

struct Shard {
  int index = 1, count = 1;  // 1-based: "2/4" is the second of four
};
std::optional<Shard> parse_shard(const std::string& text, std::string& error);
// The entries of shard i of n: every n-th, starting at the i-th.
template <class T>
std::vector<T> select_shard(const std::vector<T>& all, Shard s) {
  std::vector<T> out;
  for (size_t i = 0; i < all.size(); ++i)
    if (int(i % size_t(s.count)) == s.index - 1) out.push_back(all[i]);
  return out;
}

}  // namespace mh
