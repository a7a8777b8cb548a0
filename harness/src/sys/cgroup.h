// The cgroup file system as the harness uses it: this process's own group in a
// hierarchy, a group made below it, processes moved in, listed and killed,
// the group removed. v2 is one hierarchy (at /sys/fs/cgroup, or beside v1 at
// /sys/fs/cgroup/unified); v1 has one per controller (/sys/fs/cgroup/memory,
// /sys/fs/cgroup/freezer). Stateless; main thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mh::cgroup {

// Writes `text` to a cgroup file (one write: the kernel reads each write as
// one value). False with the reason.
bool write_text(const std::string& path, const std::string& text, std::string& error);
// Where the v2 hierarchy is mounted ("" when it is not).
std::string v2_root();
// The folder of this process's own group: in v2 for controller "", else in
// the v1 hierarchy of that controller ("memory", "freezer"). "" when that
// hierarchy is not mounted.
std::string own_dir(const std::string& controller);
// Makes `dir` (or finds it made); false with the reason.
bool make(const std::string& dir, std::string& error);
// Moves a process into the group.
bool add(const std::string& dir, pid_t pid, std::string& error);
// The processes in the group and in the groups below it (exited ones are not
// listed, even before they are reaped).
std::vector<pid_t> procs(const std::string& dir);
// v2: cgroup.kill, SIGKILL to every process of the group and of those below
// it at once, a fork racing it included.
bool kill_v2(const std::string& dir, std::string& error);
// v1: the freezer stops every task (so that none forks meanwhile), each gets
// SIGKILL, the group thaws and they die.
bool kill_frozen_v1(const std::string& dir, std::string& error);
// Removes the group and the groups below it, deepest first, waiting up to
// `wait_s` for their processes to be gone (rmdir refuses a populated group).
bool remove(const std::string& dir, double wait_s);

// The "total=" figures of a pressure file (memory.pressure: PSI), in
// microseconds: "some" is the time at least one task of the group was
// stalled on memory, "full" the time all of its runnable tasks were at once.
// Each nullopt when its line is missing.
struct PressureTotals {
  std::optional<uint64_t> some_us, full_us;
};
PressureTotals parse_pressure(std::string_view text);
// The number after `key` in a file of "key value" lines (memory.events,
// memory.oom_control, memory.stat); nullopt when no line has that key.
std::optional<int64_t> keyed_value(std::string_view text, std::string_view key);
// Whether this process's v2 group gives the memory controller to the groups
// below it (cgroup.subtree_control lists it): "" when it does, else why not.
std::string v2_memory_why_not();

}  // namespace mh::cgroup
