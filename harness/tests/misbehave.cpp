// A test workload that crashes, hangs, grows or breaks the mark protocol on
// request, for the harness's failure paths.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mhwl/workload.h"

namespace {

const mhwl::WorkloadSpec kSpec{
    "misbehave",
    "misbehaves on request (harness tests only)",
    "",
    {{"mode", mhwl::ParamType::Choice, "grow", "", 0, -1,
      {"grow", "crash", "hang", "fail", "stubborn", "hog", "sleep", "crash-second", "skip-seq"},
      "grow: 64 MiB between two marks; crash: SIGSEGV; hang: sleeps for ever; fail: exit 3; stubborn: hangs and "
      "ignores SIGTERM; hog: touches memory until killed; sleep: --ms of marks; crash-second: SIGSEGV on the second "
      "run that shares --counter; skip-seq: a mark with a wrong sequence number"},
     {"ms", mhwl::ParamType::Int, "300", "", 1, 600000, {}, "sleep: how long, in ms"},
     {"counter", mhwl::ParamType::String, "", "", 0, -1, {}, "crash-second: a file counting the runs"}},
    {{"slept_ms", "ms", "", "sleep: the time asked for (a figure that never varies)"}},
    "",
    {}};

// Which run of the ones that share `path` this is: 1, 2, 3...
int next_count(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return 0;
  char buf[16] = {0};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  int count = (n > 0 ? std::atoi(buf) : 0) + 1;
  std::string text = std::to_string(count);
  ssize_t w = ::pwrite(fd, text.data(), text.size(), 0);
  (void)w;
  ::close(fd);
  return count;
}

int body(mhwl::Context& ctx) {
  const std::string& mode = ctx.params.text("mode");
  if (mode != "sleep") ctx.report.metric_null("slept_ms", "only the sleep mode sleeps");
  if (mode == "crash" || (mode == "crash-second" && next_count(ctx.params.text("counter")) == 2)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::raise(SIGSEGV);
  }
  if (mode == "stubborn") std::signal(SIGTERM, SIG_IGN);
  if (mode == "hang" || mode == "stubborn")
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  if (mode == "fail") return 3;
  if (mode == "hog") {
    std::vector<char*> held;
    for (;;) {
      char* p = static_cast<char*>(std::malloc(16u << 20));
      if (!p) return 4;
      std::memset(p, 1, 16u << 20);
      held.push_back(p);
    }
  }
  if (mode == "skip-seq") {
    // As a workload would whose ack arrived late and satisfied its next mark.
    const char* fd = std::getenv("MEMHARNESS_MARK_FD");
    const char line[] = "{\"mark\": \"out-of-step\", \"seq\": 7}\n";
    if (fd && ::write(std::atoi(fd), line, sizeof line - 1) < 0) return 5;
  }
  if (mode == "sleep") {
    const int64_t ms = ctx.params.integer("ms");
    for (int64_t t = 0; t < ms; t += 100) {
      ctx.report.mark("tick");
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(100, ms - t)));
    }
    ctx.report.metric("slept_ms", double(ms));
    return 0;
  }
  ctx.report.mark("before");
  const size_t size = 64u << 20;
  char* p = static_cast<char*>(std::malloc(size));
  std::memset(p, 1, size);
  asm volatile("" : : "r"(p) : "memory");  // the compiler may not drop the block
  ctx.report.mark("after");
  std::free(p);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
