// The process tree's members and their sum (see proc_tree.h).
#include "measure/proc_tree.h"

#include <set>

#include "sys/json_read.h"

namespace mh::procfs {

ProcTree::ProcTree(int root_pid, const std::string& proc_root, std::string ledger_library)
    : root_pid_(root_pid), root_(proc_root), ledger_(std::move(ledger_library)), descendants_(root_pid, proc_root) {}

void ProcTree::discover() {
  const std::vector<int> found = descendants_.of(root_pid_);
  const std::set<int> now(found.begin(), found.end());
  for (auto it = members_.begin(); it != members_.end();)
    it = now.count(it->first) ? std::next(it) : members_.erase(it);
  for (int pid : now)
    if (pid != root_pid_ && !members_.count(pid)) {
      auto reader = std::make_unique<ProcReader>(pid, root_, /*with_waited_children=*/true);
      if (!ledger_.empty()) reader->use_ledger(ledger_);
      members_.emplace(pid, std::move(reader));
    }
}

int ProcTree::add_descendants(Sample& s, bool with_smaps, bool with_status, bool with_stat) {
  int counted = 0;
  for (auto& [pid, reader] : members_) {
    Sample m;
    if (!reader->sample(m, with_smaps, with_status, with_stat)) continue;  // ended meanwhile
    for (const auto& c : sample_columns())
      if (c.summed) c.set(s, c.get(s) + c.get(m));
    // A sum with a part not measured is not measured.
    s.missing |= m.missing;
    for (const auto& [column, why] : reader->null_cells()) null_cells_.emplace(column, why);
    ++counted;
  }
  // Each process's ledger figures are within a report's range (LedgerCounts); their sum may not be.
  struct Limit {
    const char* column;
    int64_t Sample::*field;
    int64_t max;
  };
  static constexpr Limit kLedgerLimits[] = {{"heap_live_kb", &Sample::heap_live_kb, kMaxKb},
                                            {"heap_blocks", &Sample::heap_blocks, kMaxCount},
                                            {"heap_allocs", &Sample::heap_allocs, kMaxCount}};
  for (const auto& l : kLedgerLimits)
    if (counted > 0 && !cell_missing(s, l.column) && s.*l.field > l.max) {
      s.missing |= column_bit(l.column);
      null_cells_.emplace(l.column, kLedgerOutOfRange);
    }
  return counted;
}

std::vector<ThreadStat> ProcTree::threads() const {
  std::vector<ThreadStat> out;
  for (const auto& [pid, reader] : members_)
    for (auto& t : reader->threads()) out.push_back(std::move(t));
  return out;
}

}  // namespace mh::procfs
