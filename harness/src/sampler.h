// The sampler: watches one running child from outside until it exits or its
// time is up. Every interval it reads the child's /proc files; on each mark the
// workload sends it timestamps the mark, samples at once and acknowledges, so a
// mark's sample is the state at that point of the workload. Runs on the runner
// thread; owns nothing but its read buffer.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "record.h"

namespace mh {

// Told the time since the start (ms) and the last mark's name ("" before the
// first): the progress line.
using ProgressFn = std::function<void(double, const std::string&)>;

struct SamplerConfig {
  int pid = -1;
  int pidfd = -1;   // readable when the child has exited
  int mark_fd = -1;  // read end of the workload's JSON lines (non-blocking)
  int ack_fd = -1;   // write end: one byte per synchronous message
  std::chrono::steady_clock::time_point t0;
  double interval_ms = 10;
  double smaps_ms = 0;  // 0: smaps_rollup at marks only
  double timeout_s = 600;
  int stop_fd = -1;  // readable when the harness is asked to stop (interrupt::wake_fd)
  std::string proc_root = "/proc";
  // Reset VmHWM at each mark, so that each phase has the kernel's own peak.
  bool reset_hwm = true;
  ProgressFn on_progress;  // about once a second and at each mark
};

// Why sampling ended. Anything but Exited leaves a child to be stopped.
enum class SamplerEnd { Exited, TimedOut, Interrupted, Error };

// Fills samples, marks, threads, workload metrics, allocator identity and
// statistics, hwm and the sampler's own cost into `rec`. On Error, `error`
// says what failed.
SamplerEnd sample_until_exit(const SamplerConfig& cfg, RunRecord& rec, std::string& error);

// The mark protocol's acknowledgement: the sequence number of the message it
// answers (0 for a message without one), 4 bytes in host order, one write.
bool write_ack(int fd, uint32_t seq);

// Applies one JSON line of the mark protocol to `rec` (exposed for tests).
// Returns the message, or a discarded value when the line is not JSON.
Json apply_message(const std::string& line, RunRecord& rec);

}  // namespace mh
