// The terminal's progress line while runs go: which run of how many, its
// elapsed time and the last mark it passed, derived from the run records.
// Main thread only.
#pragma once

#include <cstddef>
#include <string>

#include "core/record.h"

namespace mh {

class Progress {
 public:
  // Draws only when enabled (a terminal, not --quiet).
  Progress(bool enabled, size_t total) : enabled_(enabled), total_(total) {}
  void starting(size_t index, const std::string& workload, const std::string& allocator, int repetition);
  // While a run goes: its elapsed time and the last mark it passed; redrawn
  // at most every half second.
  void running(double elapsed_ms, const std::string& last_mark);
  void finished(const RunRecord& r);
  void clear();

 private:
  bool enabled_;
  size_t total_;
  size_t index_ = 0;
  std::string current_;  // "[i/n] workload under allocator, repetition r"
};

}  // namespace mh
