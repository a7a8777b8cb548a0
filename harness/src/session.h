// What the run and compare commands share: finding the installation layout,
// turning user input into jobs and arms (with exit-2 errors before anything
// runs), and executing a plan while rewriting the report after every run.
// Main thread only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan.h"

namespace mh {

// Where the workload binaries, this build's libraries and the data files are:
// beside the harness, in the same layout in the build tree and when installed.
struct Layout {
  std::string libexec, libdir, share, source;
};
Layout find_layout();

// One workload with its arguments, or a suite (optionally one shard of it).
std::optional<std::vector<Job>> resolve_jobs(const Layout& l, const std::string& workload,
                                             const std::vector<std::string>& args, const std::string& suite,
                                             const std::string& shard, std::string& error);

// An allocator spec, a name from the pins file, or scav@REV (built on demand).
std::optional<AllocatorSpec> resolve_allocator(const Layout& l, const std::string& text, std::string& error);

struct Execution {
  std::vector<Job> jobs;
  std::vector<Arm> arms;
  std::vector<PlannedRun> plan;
  double timeout_s = 600, sample_ms = 10, smaps_ms = 0;
  bool verbose = false, progress = false;
  std::string out;  // the report, rewritten after every run
  Json context;
};
// Runs the plan. Returns false (with the error) only when the report cannot be
// written; failed runs are in the records.
bool execute(const Execution& e, std::vector<RunRecord>& runs, std::string& error);

}  // namespace mh
