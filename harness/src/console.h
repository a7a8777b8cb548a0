// The terminal view: a progress line while runs go, and the summary table at the
// end, both derived from the run records. Main thread only.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "record.h"

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

// Per allocator: median (min-max) of peak RSS, final RSS, minor faults, wall
// time and CPU time over the ok runs, plus failed-run notes.
std::string summary_table(const std::vector<RunRecord>& runs);

}  // namespace mh
