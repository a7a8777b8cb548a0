// pool-idle: pool threads read many 96-512 KiB files into heap buffers; 1 in 12
// buffers is kept, the rest freed, and then the pool gets no more work. What
// matters is how much anonymous memory is left once the workers have parked.
// Workers fill their own slot of `buffers`; the main thread reads the slots only
// after the completion count says every job is done (under the mutex).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mhwl/files.h"
#include "mhwl/proc_self.h"
#include "mhwl/thread_pool.h"
#include "mhwl/touch.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

const mhwl::WorkloadSpec kSpec{
    "pool-idle",
    "pool threads read files into heap buffers, keep 1 in 12, free the rest, then park",
    "000: 4 pool threads read 480 files of 96-512 KiB, keep 1 in 12; anonymous memory beyond "
    "the start and the kept bytes must come down to 12 MB within 2.5 s (38-50 MB before the fix)",
    {
        {"threads", ParamType::Int, "4", "2", 1, 256, {}, "pool threads doing the reads"},
        {"files", ParamType::Int, "480", "48", 1, 100000, {}, "files read, one heap buffer each"},
        {"min-size", ParamType::Size, "96K", "", 1, 1024.0 * 1024 * 1024, {}, "smallest file"},
        {"max-size", ParamType::Size, "512K", "", 1, 1024.0 * 1024 * 1024, {}, "largest file"},
        {"keep-every", ParamType::Int, "12", "", 1, 1000000, {}, "keep the buffer of every Nth file, free the others"},
        {"free-on-pool", ParamType::Bool, "false", "", 0, -1, {},
         "free the dropped buffers on the worker that read them instead of on the main thread"},
        {"settle-ms", ParamType::Double, "2500", "300", 0, 3600000, {}, "idle time after the reads before the reading"},
        {"dir", ParamType::String, "", "", 0, -1, {}, "parent of the private temporary directory (default $TMPDIR or /tmp)"},
        mhwl::idle_hook_param(),
        mhwl::seed_param(),
    },
    {
        {"excess_anon_kb", "KiB", "lower",
         "RssAnon after the settle time minus (RssAnon at start + kept bytes); the seed's bound is 12 MB",
         "excess anon"},
        {"kept_kb", "KiB", "", "bytes of the buffers kept alive"},
        {"anon_start_kb", "KiB", "", "RssAnon at the start mark"},
        {"anon_settled_kb", "KiB", "", "RssAnon after the settle time"},
    },
    "reads-done",
    {},
    {"peak_rss_kb", "final_rss_kb"}};

// Reads a file into a fresh malloc'd buffer (the pool thread's allocation).
char* read_into_heap(const std::string& path, size_t& len, int& error) {
  error = 0;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = errno;
    return nullptr;
  }
  struct stat st {};
  if (fstat(fd, &st) < 0) {
    error = errno;
    ::close(fd);
    return nullptr;
  }
  len = static_cast<size_t>(st.st_size);
  char* buf = static_cast<char*>(std::malloc(len));
  if (!buf) throw std::bad_alloc();
  size_t off = 0;
  while (off < len) {
    ssize_t n = ::read(fd, buf + off, len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  mhwl::escape(buf);
  return buf;
}

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const size_t files = static_cast<size_t>(p.integer("files"));
  const size_t min_size = static_cast<size_t>(p.integer("min-size"));
  const size_t max_size = std::max(min_size, static_cast<size_t>(p.integer("max-size")));
  const size_t keep_every = static_cast<size_t>(p.integer("keep-every"));
  const bool free_on_pool = p.flag("free-on-pool");
  auto kept = [&](size_t i) { return i % keep_every == 0; };

  // The files exist before the start mark; their contents do not matter.
  mhwl::TempDir dir("memharness-pool-idle", p.text("dir"));
  std::vector<std::string> paths(files);
  std::vector<size_t> sizes(files);
  {
    std::vector<char> chunk(max_size, 'x');
    for (size_t i = 0; i < files; ++i) {
      sizes[i] = min_size + ctx.rng() % (max_size - min_size + 1);
      paths[i] = dir.path() + "/file-" + std::to_string(i);
      if (int e = mhwl::write_file(paths[i], chunk.data(), sizes[i])) {
        std::cerr << "pool-idle: write " << paths[i] << ": " << std::strerror(e) << "\n";
        return 1;
      }
    }
  }

  std::vector<char*> buffers(files, nullptr);
  std::vector<int> errors(files, 0);
  std::mutex mu;
  std::condition_variable all_done;
  size_t done = 0;

  mhwl::ThreadPool pool(static_cast<size_t>(p.integer("threads")), "pool", ctx.idle);
  // Let the workers reach their park once, so that the start reading holds their stacks.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const long anon_start = mhwl::read_mem_status().anon_kb;
  ctx.report.mark("start");

  for (size_t i = 0; i < files; ++i)
    pool.submit([&, i] {
      size_t len = 0;
      char* buf = read_into_heap(paths[i], len, errors[i]);
      if (free_on_pool && !kept(i)) {
        std::free(buf);
        buf = nullptr;
      }
      std::lock_guard lock(mu);
      buffers[i] = buf;
      if (++done == files) all_done.notify_one();
    });
  {
    std::unique_lock lock(mu);
    all_done.wait(lock, [&] { return done == files; });
  }
  size_t kept_bytes = 0, failed = 0;
  for (size_t i = 0; i < files; ++i) {
    if (errors[i]) ++failed;
    if (kept(i)) {
      kept_bytes += sizes[i];
    } else {
      std::free(buffers[i]);
      buffers[i] = nullptr;
    }
  }
  ctx.report.mark("reads-done");

  // Nothing gives the pool work from here on; the main thread only sleeps.
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(p.number("settle-ms")));
  const long anon_settled = mhwl::read_mem_status().anon_kb;
  // Named for when it is taken: idle+2.5s at the default --settle-ms 2500.
  char settled_mark[32];
  std::snprintf(settled_mark, sizeof settled_mark, "idle+%.3gs", p.number("settle-ms") / 1000);
  ctx.report.mark(settled_mark);

  const double kept_kb = static_cast<double>(kept_bytes) / 1024.0;
  ctx.report.metric("kept_kb", kept_kb);
  if (anon_start < 0 || anon_settled < 0) {
    const char* why = "RssAnon is not in /proc/self/status on this kernel";
    ctx.report.metric_null("excess_anon_kb", why);
    ctx.report.metric_null("anon_start_kb", why);
    ctx.report.metric_null("anon_settled_kb", why);
  } else {
    ctx.report.metric("excess_anon_kb", static_cast<double>(anon_settled - anon_start) - kept_kb);
    ctx.report.metric("anon_start_kb", static_cast<double>(anon_start));
    ctx.report.metric("anon_settled_kb", static_cast<double>(anon_settled));
  }

  for (auto* b : buffers) std::free(b);
  if (failed) {
    std::cerr << "pool-idle: " << failed << " of " << files << " reads failed\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
