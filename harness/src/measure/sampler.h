// The sampler: watches one running child from outside until it exits or its
// time is up. Every interval it reads the child's /proc files; on each mark the
// workload sends it timestamps the mark, samples at once and acknowledges, so a
// mark's sample is the state at that point of the workload. Runs on the main
// thread inside run_one (the harness starts no threads); its state lives for
// one run.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/record.h"
#include "measure/program_trace.h"
#include "measure/run_settings.h"

namespace mh {

class MemoryGroup;

// Told the time since the start (ms) and the last mark's name ("" before the
// first): the progress line.
using ProgressFn = std::function<void(double, const std::string&)>;

// Why sampling ended. Anything but Exited leaves a child to be stopped;
// Stopped is the driver's planned stop (a server after its idle time), not a failure.
enum class SamplerEnd { Exited, TimedOut, Interrupted, Error, Stopped };

// What a run of a program adds to the loop (program_run.h): marks from its
// output and from the clock, a load generator, a planned stop.
class SamplerDriver {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~SamplerDriver() = default;
  // Descriptors polled besides the child's (-1 entries are skipped).
  virtual std::vector<int> watch_fds() const = 0;
  // After a wake-up (a descriptor readable, or next_wake() reached; also once
  // after the child exited, alive false): the marks to take now, in order.
  virtual std::vector<std::string> step(Clock::time_point now, bool alive) = 0;
  virtual Clock::time_point next_wake() const = 0;
  // Set when sampling should end (Stopped, or Error with the message).
  virtual std::optional<SamplerEnd> end(std::string& error) const = 0;
  // After the first sample (a program held at its entry goes on from here).
  virtual void first_sample_taken() {}
};

struct SamplerConfig {
  int pid = -1;
  int pidfd = -1;   // readable when the child has exited
  int mark_fd = -1;  // read end of the workload's JSON lines (non-blocking)
  int ack_fd = -1;   // write end: one byte per synchronous message
  std::chrono::steady_clock::time_point t0;
  int stop_fd = -1;  // readable when the harness is asked to stop (interrupt::wake_fd)
  std::string proc_root = "/proc";
  // Reset VmHWM at each mark, so that each phase has the kernel's own peak.
  bool reset_hwm = true;
  // Sample the process with its live descendants, summed (proc_tree.h); VmHWM
  // and its reset stay the started process's own.
  bool tree = false;
  ProgressFn on_progress;  // about twice a second and at each mark
  SamplerDriver* driver = nullptr;  // a program's run; none for a built-in workload
  // A program traced to its exit stop: its stops are passed on as they come,
  // and at its exit a last sample and its VmHWM are taken (into hwm_kb).
  ProgramTrace* trace = nullptr;
  // The heap ledger preloaded in the run ("" for none): its counters are read
  // with every sample of every process of the tree.
  std::string ledger_library;
  // --heap-sample: the ledger's sampled call sites are read at every mark.
  bool heap_sites = false;
  // The run's memory group (memory_group.h): its charge and stall are read
  // with every sample. None: those columns are null.
  MemoryGroup* memory_group = nullptr;
};

// Samples every settings.sample_ms, smaps_rollup every settings.smaps_ms (0:
// at marks only), until settings.timeout_s after cfg.t0. Fills samples, marks,
// threads, workload metrics, allocator identity and statistics, hwm and the
// sampler's own cost into `rec`. On Error, `error` says what failed.
SamplerEnd sample_until_exit(const SamplerConfig& cfg, const RunSettings& settings, RunRecord& rec,
                             std::string& error);

// The mark protocol's acknowledgement: the sequence number of the message it
// answers (0 for a message without one), 4 bytes in host order, one write.
bool write_ack(int fd, uint32_t seq);

// Applies one JSON line of the mark protocol to `rec` (exposed for tests and
// the fuzzer). Returns the message; nullopt, with the error naming the field
// and what was expected, when the line is not a valid message (not JSON,
// nested past kLineLimits, a field of the wrong type or out of range): it
// then changes nothing, and the sampler makes it the run's protocol error.
// With a budget, a message past it is checked the same but not kept (the
// budget counts it as dropped).
class RunBudget;
std::optional<Json> apply_message(const std::string& line, RunRecord& rec, std::string& error,
                                  RunBudget* budget = nullptr);

}  // namespace mh
