// Marks and metrics to the harness: JSON lines on the descriptor named by
// MEMHARNESS_MARK_FD. Marks are synchronous when MEMHARNESS_ACK_FD is given: the
// call returns once the harness has sampled the process, so the sample is taken
// at the mark. Without the variables (run by hand) everything is skipped.
// Thread-safe: a message is written whole under a lock, acks are serialised.
#pragma once

#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace mhwl {

class Reporter {
 public:
  static Reporter& get();  // reads the environment once

  bool connected() const { return mark_fd_ >= 0; }
  void mark(std::string_view name);
  // The same synchronous mark without a heap allocation (no JSON value, no
  // string), for a workload that must keep out of the allocator while it
  // measures. name: plain ASCII without quotes or backslashes, under 200 bytes.
  void mark_noalloc(const char* name);
  void metric(std::string_view name, double value);
  void metric_null(std::string_view name, std::string_view reason);
  // A figure that never came within the run: more than `bound` (a time the
  // run had left), null with the reason; a comparison ranks it above every
  // figure below the bound.
  void metric_above(std::string_view name, double bound, std::string_view reason);
  // Structured results that are not one number (e.g. Google Benchmark's JSON):
  // stored in the run's "data" object under `key`.
  void data(std::string_view key, const nlohmann::ordered_json& value);
  // Any other message ("allocator", "allocator_stats", "hwm_kb"); sync waits for the ack.
  void send(const nlohmann::ordered_json& message, bool sync = false);

 private:
  Reporter();
  // Writes one message line; with wait_ack, waits for the harness's ack of
  // message number seq_. Caller holds mu_.
  void write_line(const char* line, size_t len, bool wait_ack);
  // Waits for the ack that echoes seq_, dropping late acks of earlier
  // messages; false when none came in time. Caller holds mu_.
  bool wait_for_ack();
  // Writes all of `data` to the mark descriptor; false when it is closed. Caller holds mu_.
  bool write_all(const char* data, size_t len);
  int mark_fd_ = -1;
  int ack_fd_ = -1;
  // Synchronous messages are numbered 1, 2, 3...; the harness echoes the
  // number in its ack, so a late ack can never stand for a later message.
  uint32_t seq_ = 0;
  std::mutex mu_;
};

// VmHWM of this process in KiB, read from /proc/self/status; -1 when unreadable.
long read_own_hwm_kb();

}  // namespace mhwl
