// The terminal view: a progress line while runs go, and the summary table at the
// end, both derived from the run records; the summary's markdown and CSV
// exports beside it. Main thread only.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/record.h"
#include "inputs/workloads.h"

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

// A block per workload, a row per allocator: median (min-max) over the ok runs
// of the workload's headline figures (its result, which ranks the rows), then
// peak RSS, minor faults, wall and CPU time, and RSS at exit; then failed-run
// notes. Headline figures by workload name; a workload without any keeps the
// order of the runs.
std::string summary_table(const std::vector<RunRecord>& runs,
                          const std::map<std::string, std::vector<Headline>>& headlines = {});
// The same table as markdown (a table per workload, the notes as a list).
std::string summary_markdown(const std::vector<RunRecord>& runs,
                             const std::map<std::string, std::vector<Headline>>& headlines = {});
// Every metric of the summary, one line per workload, allocator, role and
// metric, values in the stored unit (named in the unit column).
std::string summary_csv(const std::vector<RunRecord>& runs, const DeclaredMetrics& declared = {});

}  // namespace mh
