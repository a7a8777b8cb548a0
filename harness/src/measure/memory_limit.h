// --memory-limit: a memory cgroup of its own for each run where the machine
// lets the harness make one (cgroup v2 memory.max, or the v1 memory
// controller's memory.limit_in_bytes), else RLIMIT_AS set in the child before
// its exec. With a cgroup, a run the kernel killed for passing the limit is
// told apart from any other SIGKILL (memory.events / memory.oom_control).
// One MemoryCgroup per run, owned by the runner.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/record.h"

namespace mh {

// "512M", "2G", "1048576": bytes, or nullopt for text that is not a size.
std::optional<uint64_t> parse_size(const std::string& text);

class MemoryCgroup {
 public:
  // Makes a group for one run with `bytes` as its limit. When no cgroup can
  // be made, ok() is false and why() says so: the caller falls back to RLIMIT_AS.
  MemoryCgroup(uint64_t bytes, const std::string& name);
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  bool ok() const { return !dir_.empty(); }
  const std::string& why() const { return why_; }
  const std::string& mechanism() const { return mechanism_; }  // "cgroup v2 memory.max", ...
  const std::string& dir() const { return dir_; }
  // Moves `pid` (held before its exec) into the group.
  bool add(pid_t pid, std::string& error) const;
  // Processes the kernel's OOM killer ended in this group so far.
  int64_t oom_kills() const;

 private:
  std::string dir_, why_, mechanism_;
  bool v2_ = false;
};

// The report's "memory_limit" block of a run.
Json memory_limit_json(uint64_t bytes, const std::string& mechanism, const std::string& note);

}  // namespace mh
