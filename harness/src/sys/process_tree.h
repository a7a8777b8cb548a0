// A process's descendants as /proc shows them now: through
// /proc/PID/task/TID/children or, where the kernel has no such file
// (CONFIG_PROC_CHILDREN off), a scan of /proc for parent pids. Read by the
// sampler's process tree (measure/proc_tree.h) and by containment (what a run
// left running). Stateless; main thread.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"

namespace mh::procfs {

class Descendants {
 public:
  // Whether the kernel has children files is a build option: `probe_pid`'s
  // own (a process known to be alive) tells.
  explicit Descendants(int probe_pid, const std::string& proc_root = "/proc");
  // The children of `pid`, then theirs, and so on (pid itself excluded). A
  // process that forks between two reads may be missed: callers that must
  // miss nothing ask again until nothing new is found.
  std::vector<int> of(int pid) const;
  // The direct children of `pid`.
  std::vector<int> children_of(int pid) const;
  // How they are found: "children files" or "scan of /proc".
  const char* how() const { return children_files_ ? "children files" : "scan of /proc"; }

 private:
  std::vector<int> by_scan(int pid, bool direct_only) const;

  std::string root_;
  bool children_files_;
};

// What a person needs to recognise a process: its pid, name and command line
// (read now; empty when it is already gone). `from` is left for the caller.
LeftoverProcess describe_process(int pid, const std::string& proc_root = "/proc");

}  // namespace mh::procfs
