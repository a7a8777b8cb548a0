// Parsers of /proc text, pure functions on the file contents so that fixture
// files can test them, plus ProcReader, which keeps one process's files open
// and re-reads them with pread for each sample. A ProcReader belongs to one
// run's sampler, on the main thread (the harness starts no threads).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/record.h"
#include "sys/heap_ledger.h"

namespace mh::procfs {

struct StatFields {
  std::string comm;
  char state = '?';
  int ppid = 0;
  int64_t minflt = 0, majflt = 0;
  int64_t utime_ticks = 0, stime_ticks = 0;
  // The same of the children it waited for (their waited-for children included).
  int64_t cminflt = 0, cmajflt = 0, cutime_ticks = 0, cstime_ticks = 0;
  int64_t num_threads = 0;
};

// /proc/PID/stat or /proc/PID/task/TID/stat. The name may hold spaces and ')'.
std::optional<StatFields> parse_stat(std::string_view text);
// /proc/PID/statm: resident and shared (file-backed + shmem) pages.
std::optional<std::pair<int64_t, int64_t>> parse_statm_resident_shared_pages(std::string_view text);
// Calls f with every line of text (without its '\n').
void for_each_line(std::string_view text, const std::function<void(std::string_view)>& f);
// "Key:   value kB" files (status, smaps_rollup): every key with its number.
std::map<std::string, int64_t> parse_kv(std::string_view text);
struct SchedStat {
  uint64_t cpu_ns = 0, wait_ns = 0, timeslices = 0;
};
std::optional<SchedStat> parse_schedstat(std::string_view text);
// The selected value of a sysfs choice file such as "always [madvise] never".
std::string parse_bracketed_choice(std::string_view text);

// /proc/PID/smaps: the resident anonymous KiB of the mappings that are not
// malloc's: [stack] and every mapping holding one of `stack_pointers` (a
// thread's stack), and [anon:NAME] mappings the program named.
NotMalloc parse_not_malloc(std::string_view smaps, const std::vector<uint64_t>& stack_pointers);
// A thread's stack pointer from /proc/PID/task/TID/syscall ("NR A1 .. A6 SP PC",
// or "-1 SP PC" outside a system call); none while it runs ("running").
std::optional<uint64_t> parse_syscall_sp(std::string_view text);

// Reads whole small file; nullopt when it cannot be read.
std::optional<std::string> read_text(const std::string& path);

// Whether this machine is a virtual machine that reports its free memory to
// its host (virtio-balloon free page reporting, feature bit 5 of a balloon
// device under sys/bus/virtio/devices): "on (virtio-balloon, order N)" or
// "off". Where it is on, the host takes reported pages back, and the first
// touch of one the kernel hands out again waits for the host to back it:
// page-cache writes and first faults several times slower, from run to run
// as the reporting happened to run (docs/measuring.md). `sys` is /sys but for tests.
std::string free_page_reporting(const std::string& sys = "/sys");

class ProcReader {
 public:
  // Reads root/PID/... (root is /proc but for tests). With
  // `with_waited_children`, the faults and CPU times include those of the
  // children the process waited for (stat's c* fields): a process tree's sum
  // then keeps what its ended members did.
  explicit ProcReader(int pid, const std::string& root = "/proc", bool with_waited_children = false);
  ~ProcReader();
  ProcReader(const ProcReader&) = delete;
  ProcReader& operator=(const ProcReader&) = delete;

  // One sample of the whole process; false when the process has no memory any
  // more (it exited or is exiting), in which case `out` is not to be used.
  // smaps_rollup walks every page table of the process (milliseconds for a few
  // hundred MB), so AnonHugePages is read only when `with_smaps`; otherwise
  // the last value read is carried forward.
  // statm gives RSS and its anonymous part (resident - shared); status, for the
  // split of the shared part into file and shmem,
  // is read only when `with_status` (the split is carried forward otherwise).
  // A column with nothing to carry forward yet, or whose key the kernel's
  // file lacks, is marked missing in `out` (null_cells() says why).
  // stat (faults, CPU time, threads) sums over every thread and takes each
  // thread's run-queue lock for its runtime, which a busy workload feels: it
  // is read only when `with_stat`, carried forward otherwise.
  bool sample(Sample& out, bool with_smaps, bool with_status = true, bool with_stat = true);
  // Reads the heap ledger's counters with every sample from now on (the
  // heap_* columns); without it they are unreadable.
  void use_ledger(const std::string& library);
  // The ledger's sampled heap by call site at its peak snapshot (none without
  // a ledger, or when the process samples nothing).
  std::optional<HeapSites> heap_sites_peak() { return ledger_ ? ledger_->peak_sites() : std::nullopt; }
  // The live ones and the peak's at once (a mark): the maps read once.
  LedgerReader::MarkSites heap_sites_and_peak() { return ledger_ ? ledger_->sites_and_peak() : LedgerReader::MarkSites{}; }
  // Why the sites of the last of those two were read and not kept (none: they were).
  std::vector<std::string> heap_sites_refused() const { return ledger_ ? ledger_->refused() : std::vector<std::string>{}; }
  std::vector<ThreadStat> threads() const;
  // With the ledger (use_ledger): the anonymous memory that is not malloc's
  // (parse_not_malloc over smaps and the threads' stack pointers); none
  // without it or when smaps cannot be read.
  std::optional<NotMalloc> not_malloc() const;
  // VmHWM from the last sample that read status (none when it had none).
  std::optional<int64_t> last_hwm_kb() const { return last_hwm_kb_; }
  // Resets VmHWM to the current RSS (/proc/PID/clear_refs, value 5), so that
  // the next reading is the peak from now on. False when the kernel or the
  // permissions do not allow it; reset_error() says why.
  bool reset_hwm();
  const std::string& reset_error() const { return reset_error_; }
  // Why no sample could be taken ("" when the files opened and read).
  const std::string& error() const { return error_; }
  // Columns that cannot be sampled at all, with the reason (see Sample).
  const std::map<std::string, std::string>& unreadable() const { return unreadable_; }
  // Columns some samples could not give, with the reason (see Sample::missing).
  const std::map<std::string, std::string>& null_cells() const { return null_cells_; }

 private:
  bool pread_all(int fd, std::string& buf);
  void split_shared(Sample& out, int64_t shared_kb);
  void read_status_split(Sample& out, const std::map<std::string, int64_t>& status);
  void read_smaps(Sample& out, bool with_smaps);
  void read_ledger(Sample& out, bool at_mark);
  // Marks `column` missing in `out` (present when why is ""), keeping why.
  void note(Sample& out, const char* column, const std::string& why);
  int pid_;
  std::string root_;
  bool with_waited_children_;
  std::string error_;
  std::map<std::string, std::string> unreadable_, null_cells_;
  int statm_fd_ = -1, stat_fd_ = -1, status_fd_ = -1, smaps_fd_ = -1;
  int clear_refs_fd_ = -1;  // opened at the first reset; -2 when it cannot be
  std::string reset_error_;
  std::optional<int64_t> last_hwm_kb_;
  long page_kb_;
  double tick_ms_;
  std::string buf_;
  // Carried forward between the reads of smaps_rollup and status; none
  // before the first (or when the key was missing).
  std::optional<int64_t> anon_huge_kb_, lazyfree_kb_, shmem_kb_;
  std::optional<LedgerReader> ledger_;
  Sample last_stat_;  // minflt, majflt, utime_ms, stime_ms, threads of the last stat read
};

}  // namespace mh::procfs
