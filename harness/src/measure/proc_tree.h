// A process tree sampled as one (prmon's way): the started program and its
// live descendants (sys/process_tree.h finds them). Each descendant's sample is added to the program's own, so a
// compiler driver's column includes its cc1plus. A ProcTree belongs to one
// run's sampler, on the main thread (the harness starts no threads).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/record.h"
#include "sys/process_tree.h"
#include "sys/procfs.h"

namespace mh::procfs {

class ProcTree {
 public:
  // The root is sampled by the caller's own reader; this one keeps readers of
  // its descendants only.
  // With a ledger library, each member's heap ledger is read too.
  explicit ProcTree(int root_pid, const std::string& proc_root = "/proc", std::string ledger_library = "");

  // Finds the descendants as they are now: new ones get a reader, ended ones
  // are dropped. A process that lives less than the time between two calls
  // may be missed: its faults and CPU time still reach its parent's waited-for
  // counts, its memory does not. So is one that leaves the tree (a daemon
  // whose parent exits is adopted by init).
  void discover();
  // Adds every live descendant's columns to `s` (the root's sample). RSS and
  // its parts are summed over processes, so a page two of them share counts
  // twice (as in prmon's rss). Faults and CPU times include the children each
  // one waited for (stat's c* fields). Returns how many descendants counted.
  int add_descendants(Sample& s, bool with_smaps, bool with_status, bool with_stat);
  // Per-thread CPU and context switches of every descendant's threads.
  std::vector<ThreadStat> threads() const;
  // The descendants' columns that some samples lacked, with the reason
  // (ProcReader::null_cells), kept after they ended.
  const std::map<std::string, std::string>& null_cells() const { return null_cells_; }
  // How descendants are found: "children files" or "scan of /proc".
  const char* how() const { return descendants_.how(); }

 private:
  int root_pid_;
  std::string root_, ledger_;
  Descendants descendants_;
  std::map<int, std::unique_ptr<ProcReader>> members_;
  std::map<std::string, std::string> null_cells_;
};

}  // namespace mh::procfs
