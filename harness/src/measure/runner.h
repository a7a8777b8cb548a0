// The runner: one run of one workload under one allocator, from spawn to the
// finished RunRecord. Called from the main thread, one run at a time.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "inputs/allocators.h"
#include "inputs/program.h"
#include "core/record.h"
#include "measure/run_settings.h"
#include "measure/sampler.h"

namespace mh {

struct RunRequest {
  std::string workload;
  std::string binary;             // the workload executable
  std::vector<std::string> args;  // its parameters as the user gave them
  Json params;                    // the resolved values, for the record
  AllocatorSpec allocator;
  int repetition = 0;
  RunSettings run;  // timeout, sampling, memory limit, --after
  bool pass_output = false;  // the workload's output to our stderr as well
  std::vector<std::string> declared_metrics;  // a run that lacks one of these failed
  // Where the run's own temporary directory is made ("": $TMPDIR, else /tmp).
  // The workload gets it as TMPDIR; it is removed after the run, however it ended.
  std::string tmp_parent;
  ProgressFn on_progress;  // called about twice a second and at each mark
  // The mark the job idles from (a workload's declared idle mark, "load-end"
  // for a program under load): the after.* curve metrics are measured from it
  // unless run.after_mark (--after) names another (curve.h).
  std::string declared_after;
  // Set for any program (harness -- PROGRAM ARGS) instead of a workload binary:
  // its argv, environment, marks and load; its allocator verified by its maps.
  const Program* program = nullptr;
  // The heap ledger library preloaded ahead of the allocator (--ledger); "" for none.
  std::string ledger_library;
};

RunRecord run_one(const RunRequest& req);

// How a run ended, as the runner saw it.
struct RunEnd {
  SamplerEnd how = SamplerEnd::Exited;
  int wait_status = 0;
  bool oom = false;         // the memory cgroup's OOM killer ended it
  std::string error;        // the spawn or the sampler failed
  std::string limit_note;   // said with a failure under a memory limit
  int expected_exit = 0;    // the exit status of an ok run (--expect-exit)
  bool fail_on_leftovers = false;  // --leftovers fail: a run that left processes failed
};

// Decides verified and status from what the run produced (pure; tested).
void judge(RunRecord& rec, const RunEnd& end, const std::vector<std::string>& declared_metrics = {});

}  // namespace mh
