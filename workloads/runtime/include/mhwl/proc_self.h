// Readers of this process's own memory counters (/proc/self/statm, status,
// smaps_rollup, getrusage). None of them allocates from the heap, so a workload
// may call them while it must keep out of the allocator. Any thread may call them.
#pragma once

namespace mhwl {

struct MemStatus {
  long rss_kb = -1;    // VmRSS
  long anon_kb = -1;   // RssAnon
  long file_kb = -1;   // RssFile
  long shmem_kb = -1;  // RssShmem
};

// From /proc/self/status; fields it could not read stay -1.
MemStatus read_mem_status();

// Resident set from /proc/self/statm in KiB, -1 when unreadable.
long read_rss_kb();

// AnonHugePages of /proc/self/smaps_rollup in KiB, -1 when unreadable. It walks
// every page table of the process: milliseconds for hundreds of MB, use sparingly.
long read_anon_huge_kb();

// Minor page faults of the whole process so far (getrusage RUSAGE_SELF).
long minor_faults();

// statm through a descriptor opened once: a reading is one pread and no open,
// for loops that sample RSS often.
class StatmReader {
 public:
  StatmReader();
  ~StatmReader();
  StatmReader(const StatmReader&) = delete;
  StatmReader& operator=(const StatmReader&) = delete;
  bool ok() const { return fd_ >= 0; }
  long rss_kb() const;  // -1 when unreadable

 private:
  int fd_ = -1;
  long page_kb_ = 4;
};

}  // namespace mhwl
