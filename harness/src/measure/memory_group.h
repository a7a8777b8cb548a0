// The run's memory cgroup: every run gets a memory group of its own, with or
// without a limit (cgroup v2 where its memory controller is delegated to the
// harness's group, else the v1 memory hierarchy), and a v2 group whose
// memory.pressure (PSI) is the run's own, even where the memory controller is
// on v1 (PSI is counted in a task's v2 group whichever hierarchy reclaims).
// --memory-limit sets the group's limit (v2 memory.max, v1
// memory.limit_in_bytes); where no group can be made it falls back to
// RLIMIT_AS. --memory-high sets v2 memory.high (no v1 equivalent). The
// groups are removed with the object, and by a second SIGINT's handler.
// One MemoryGroup per run, owned by the runner on the main thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/record.h"
#include "sys/cgroup.h"

namespace mh {

// "512M", "2G", "1048576": bytes, or nullopt for text that is not a size.
std::optional<uint64_t> parse_size(const std::string& text);

// What the run's memory group is asked to hold it to; 0: none.
struct MemoryGroupSettings {
  uint64_t max_bytes = 0;   // --memory-limit: the kernel reclaims, then OOM-kills, past it
  uint64_t high_bytes = 0;  // --memory-high: the kernel reclaims and throttles past it, never kills
};

// "" when --memory-high can be honoured here (cgroup v2 with its memory
// controller delegated to the harness's group), else why not.
std::string memory_high_why_not();

class MemoryGroup {
 public:
  // Makes the groups of one run named `name` (the name of its containment,
  // so that under v2 both are one group). Where no memory group can be made,
  // has_memory() is false and why() says so; a limit then falls back to
  // RLIMIT_AS (the caller's).
  MemoryGroup(const MemoryGroupSettings& settings, const std::string& name);
  ~MemoryGroup();
  MemoryGroup(const MemoryGroup&) = delete;
  MemoryGroup& operator=(const MemoryGroup&) = delete;

  bool has_memory() const { return !memory_dir_.empty(); }
  // Whether settings.max_bytes is applied by the memory group.
  bool limited() const { return limited_; }
  const std::string& why() const { return why_; }
  // The limit's mechanism: "cgroup v2 memory.max", "cgroup v1 memory.limit_in_bytes".
  std::string limit_mechanism() const;
  // Moves `pid` (held before its exec) into the groups and reads the
  // pressure totals the run's stall is counted from.
  bool add(pid_t pid, std::string& error);
  // The cgroup columns of a sample (cgroup_kb, psi_some_ms, psi_full_ms);
  // the ones it cannot read are marked missing, with the reason in null_cells().
  void sample(Sample& s);
  const std::map<std::string, std::string>& null_cells() const { return null_cells_; }
  // Processes the kernel's OOM killer ended in the group so far.
  int64_t oom_kills() const;
  // At the end of the run: its figures into rec.memory_group, the reason of
  // each missing one into rec.unmeasured, how they were read into
  // rec.memory_group_info.
  void record(RunRecord& rec) const;

 private:
  void make_v2_memory(const MemoryGroupSettings& settings, const std::string& dir);
  void make_v1_memory(const MemoryGroupSettings& settings, const std::string& dir);
  void make_pressure(const std::string& name);
  std::optional<cgroup::PressureTotals> pressure_since_start() const;
  std::string memory_file(const char* v2_name, const char* v1_name) const;

  std::string memory_dir_, pressure_dir_, why_, pressure_why_;
  std::string add_error_;  // the run could not be moved into its groups: no figure is its own
  bool v2_ = false, limited_ = false, high_ = false;
  cgroup::PressureTotals start_{};
  std::map<std::string, std::string> null_cells_;
  int exit_slots_[2] = {-1, -1};  // where a second SIGINT finds the groups (interrupt.h)
};

// The report's "memory_limit" block of a run.
Json memory_limit_json(uint64_t bytes, const std::string& mechanism, const std::string& note);

}  // namespace mh
