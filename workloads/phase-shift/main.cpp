// phase-shift: a heap phase, then a page-cache phase. Hundreds of MiB of small
// blocks are allocated, touched and freed; then as much again is written to
// files and read back, which needs the page cache. Memory an allocator keeps
// after the first phase is charged to the run's cgroup and, without swap,
// cannot be reclaimed (unless given back, or lent with MADV_FREE), so under a
// memory limit it squeezes out the second phase's cache: the files are read
// back from the disk and the phase slows. Single-threaded.
#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <linux/magic.h>
#include <string>
#include <thread>
#include <vector>

#include "mhwl/files.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;
using Clock = std::chrono::steady_clock;

const mhwl::WorkloadSpec kSpec{
    "phase-shift",
    "small blocks allocated and freed, then as much again in file writes read back through the page cache",
    "the memory a program needs: an allocator that keeps the first phase's pages needs a larger memory limit",
    {
        {"heap", ParamType::Size, "384M", "48M", 1024 * 1024, 64.0 * 1024 * 1024 * 1024, {},
         "bytes of small blocks allocated (and touched), then all freed"},
        {"block-min", ParamType::Size, "16", "", 1, 65536, {}, "smallest block"},
        {"block-max", ParamType::Size, "512", "", 1, 65536, {}, "largest block (sizes uniform in between)"},
        {"files", ParamType::Size, "384M", "48M", 1024 * 1024, 64.0 * 1024 * 1024 * 1024, {},
         "bytes written to files after the heap is freed"},
        {"file-size", ParamType::Size, "8M", "4M", 4096, 1024.0 * 1024 * 1024, {}, "bytes per file"},
        {"passes", ParamType::Int, "3", "2", 0, 1000, {},
         "times every file is read back after the writes (from the page cache when it still holds them)"},
        {"pause", ParamType::Double, "1", "0.2", 0, 3600, {},
         "seconds between the phases (the program's other work): an allocator that gives memory back on a timer does it here"},
        {"dir", ParamType::String, "", "", 0, -1, {},
         "parent of the private temporary directory (default /var/tmp where it is on a disk, else $TMPDIR or /tmp); "
         "on tmpfs the files are shared memory that a limit cannot reclaim without swap"},
        mhwl::seed_param(),
    },
    {
        {"heap_ms", "ms", "", "time to allocate, touch and free the blocks"},
        {"files_ms", "ms", "lower", "time to write the files and read them back --passes times", "files"},
        {"dir_on_tmpfs", "count", "", "1 when the files went to tmpfs (their cache cannot be reclaimed), else 0"},
    },
    "files-done",
    {},
    {"peak_rss_kb", "cgroup_peak_kb", "wall_ms"}};

bool on_tmpfs(const std::string& dir) {
  struct statfs st {};
  return statfs(dir.c_str(), &st) == 0 && st.f_type == TMPFS_MAGIC;
}

// --dir, else /var/tmp on a disk, else the run's own temporary folder.
std::string files_parent(const std::string& asked) {
  if (!asked.empty()) return asked;
  if (!on_tmpfs("/var/tmp") && access("/var/tmp", W_OK) == 0) return "/var/tmp";
  return "";
}

// The heap phase: blocks of random small sizes up to `total` bytes, each
// touched, then freed in random order (so that no allocator gets them back
// in the order it gave them). Returns 0 or 1 when an allocation failed.
int heap_phase(mhwl::Context& ctx, size_t total, size_t lo, size_t hi) {
  std::vector<char*> blocks;
  blocks.reserve(total / ((lo + hi) / 2) + 1);
  for (size_t used = 0; used < total;) {
    const size_t n = lo + ctx.rng() % (hi - lo + 1);
    char* b = static_cast<char*>(std::malloc(n));
    if (!b) return 1;
    std::memset(b, int(used), n);
    blocks.push_back(b);
    used += n;
  }
  ctx.report.mark("heap-full");
  for (size_t i = blocks.size(); i > 1; --i) std::swap(blocks[i - 1], blocks[ctx.rng() % i]);
  for (char* b : blocks) std::free(b);
  std::vector<char*>().swap(blocks);
  ctx.report.mark("freed");
  return 0;
}

// Reads `path` through `buf` (whole, chunk by chunk); 0 or an errno value.
int read_through(const std::string& path, std::vector<char>& buf) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = 0;
  while ((n = read(fd, buf.data(), buf.size())) > 0) {
  }
  const int err = n < 0 ? errno : 0;
  close(fd);
  return err;
}

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const size_t lo = size_t(p.integer("block-min")), hi = size_t(p.integer("block-max"));
  if (lo > hi) {
    std::cerr << "phase-shift: --block-min " << lo << " is above --block-max " << hi << "\n";
    return 2;
  }
  const std::string parent = files_parent(p.text("dir"));
  mhwl::TempDir dir("memharness-phase", parent);
  const bool tmpfs = on_tmpfs(dir.path());
  if (tmpfs) std::cerr << "phase-shift: " << dir.path() << " is on tmpfs: its files are memory a limit cannot reclaim\n";
  ctx.report.mark("start");

  const auto t0 = Clock::now();
  if (heap_phase(ctx, size_t(p.integer("heap")), lo, hi) != 0) {
    std::cerr << "phase-shift: an allocation failed\n";
    return 1;
  }
  const auto t1 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(p.number("pause")));
  ctx.report.mark("paused");
  const auto files_from = Clock::now();

  const size_t file_size = size_t(p.integer("file-size"));
  const size_t count = std::max<size_t>(1, size_t(p.integer("files")) / file_size);
  std::vector<char> buf(1 << 20);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = char(' ' + ctx.rng() % 95);
  std::vector<char> content(file_size);
  for (size_t i = 0; i < file_size; ++i) content[i] = buf[i % buf.size()];
  for (size_t i = 0; i < count; ++i)
    if (int err = mhwl::write_file(dir.path() + "/" + std::to_string(i), content.data(), file_size)) {
      std::cerr << "phase-shift: write: " << std::strerror(err) << "\n";
      return 1;
    }
  ctx.report.mark("written");
  for (int pass = 0; pass < int(p.integer("passes")); ++pass)
    for (size_t i = 0; i < count; ++i)
      if (int err = read_through(dir.path() + "/" + std::to_string(i), buf)) {
        std::cerr << "phase-shift: read: " << std::strerror(err) << "\n";
        return 1;
      }
  ctx.report.mark("files-done");
  const auto t2 = Clock::now();

  ctx.report.metric("heap_ms", std::chrono::duration<double, std::milli>(t1 - t0).count());
  ctx.report.metric("files_ms", std::chrono::duration<double, std::milli>(t2 - files_from).count());
  ctx.report.metric("dir_on_tmpfs", tmpfs ? 1 : 0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
