// The heap ledger's counters read from outside a process (process_vm_readv at
// the symbol `memharness_ledger` of the ledger library mapped in it), without
// stopping it. See harness/include/memharness/ledger.h for the layout.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/record.h"

// The counter block (memharness/ledger.h, included where it is read).
struct memharness_ledger;
struct memharness_ledger_site;

namespace mh {

// The sums over the thread slots, each none when it is out of the range a
// report holds (kMaxKb KiB, kMaxCount blocks and calls; sys/json_read.h): the
// process wrote over its counters, or a forked child freed its parent's blocks.
struct LedgerCounts {
  std::optional<int64_t> live_bytes, live_blocks, allocs;
};
// Why a figure of LedgerCounts is none (one reason per figure, always the same).
inline constexpr const char* kLedgerOutOfRange =
    "the heap ledger's counters sum to a value out of the range a report holds (the process wrote over them, "
    "or freed blocks it did not allocate)";

class LedgerReader {
 public:
  // `library`: the ledger's path as the loader maps it (canonical).
  LedgerReader(int pid, std::string library, std::string proc_root = "/proc");
  // The sum over the process's thread slots now; none when the process has no
  // ledger (why() says why: not mapped, unreadable, gone). A process without
  // one is looked for again at most every 20 ms, unless `look_now` (a mark).
  std::optional<LedgerCounts> read(bool look_now = false);
  const std::string& why() const { return why_; }
  // Why the call sites of the last peak_sites or sites_and_peak were not kept
  // although read, a reason per read refused: a value of the ledger's tables
  // out of the range a report holds (empty when none was).
  const std::vector<std::string>& refused() const { return refused_; }
  // The sampled heap by call stack as the ledger's peak snapshot holds it, the
  // `top` heaviest kept (the rest summed), each frame as the mapped object and
  // offset it falls in, with the live heap the snapshot was taken at and how
  // many were taken. None before the first snapshot, when the process samples
  // nothing, or when it cannot be read (why()).
  std::optional<HeapSites> peak_sites(size_t top = 50);
  // At a mark: the live sampled blocks by call stack (as above) and the peak
  // snapshot, the process's maps read once for the two. Besides the `top`
  // heaviest, a mark keeps (up to `top` more) the stacks an earlier mark of
  // this reader kept among its heaviest, so that a site in the top list at
  // one mark is not summed into the rest at a later one (a diff of two marks,
  // core/mark_diff.h).
  struct MarkSites {
    std::optional<HeapSites> live, peak;
  };
  MarkSites sites_and_peak(size_t top = 50);

 private:
  std::string read_maps() const;
  std::optional<HeapSites> live_sites(size_t top, std::string_view maps);
  std::optional<HeapSites> snapshot_sites(size_t top, std::string_view maps);
  // Where the counter block is in the process now (after an exec it moves).
  bool locate();
  bool read_block(uint64_t addr, void* out, size_t len);
  // The per-stack sums, live or of the peak snapshot, read until the table's
  // sequence number says no write overlapped (a few tries), with the head
  // they belong to. False when the process samples nothing (why()).
  bool read_sums(::memharness_ledger& head, bool peak, std::vector<::memharness_ledger_site>& sums);
  // The heaviest `top` stacks of the sums, their frames read, the rest summed.
  // `keep`: the stacks to keep beyond the `top` heaviest (up to `top` of
  // them), and where the heaviest are added; none for the peak snapshot.
  std::optional<HeapSites> fold(const ::memharness_ledger& head, const std::vector<::memharness_ledger_site>& sums,
                                size_t top, std::string_view maps, std::vector<bool>* keep = nullptr);
  // The counter block's head (located and checked); false when there is none.
  bool read_head(::memharness_ledger& head);
  int pid_;
  // The read's sites not kept: why_ and refused_ say why.
  void refuse(const std::string& what);
  std::string library_, root_, why_;
  std::vector<std::string> refused_;
  uint64_t addr_ = 0;
  std::chrono::steady_clock::time_point next_locate_{};
  std::vector<char> slots_;
  std::vector<bool> kept_at_marks_;  // by stack index: among a mark's heaviest once
};

// The file name of the ledger library in a build or installation's lib folder.
inline constexpr const char* kLedgerLibraryName = "libmemharness-ledger.so";

}  // namespace mh
