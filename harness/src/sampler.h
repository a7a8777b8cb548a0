// The sampler: watches one running child from outside until it exits or its
// time is up. Every interval it reads the child's /proc files; on each mark the
// workload sends it timestamps the mark, samples at once and acknowledges, so a
// mark's sample is the state at that point of the workload. Runs on the runner
// thread; owns nothing but its read buffer.
#pragma once

#include <chrono>

#include "record.h"

namespace mh {

struct SamplerConfig {
  int pid = -1;
  int pidfd = -1;   // readable when the child has exited
  int mark_fd = -1;  // read end of the workload's JSON lines (non-blocking)
  int ack_fd = -1;   // write end: one byte per synchronous message
  std::chrono::steady_clock::time_point t0;
  double interval_ms = 10;
  double smaps_ms = 0;  // 0: smaps_rollup at marks only
  double timeout_s = 600;
};

// Fills samples, marks, threads, workload metrics, allocator identity and
// statistics, hwm and the sampler's own cost into `rec`. Returns false when the
// timeout ran out before the child exited.
bool sample_until_exit(const SamplerConfig& cfg, RunRecord& rec);

// Applies one JSON line of the mark protocol to `rec` (exposed for tests).
// Returns the message, or a discarded value when the line is not JSON.
Json apply_message(const std::string& line, RunRecord& rec);

}  // namespace mh
