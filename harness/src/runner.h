// The runner: one run of one workload under one allocator, from spawn to the
// finished RunRecord. Called from the main thread, one run at a time.
#pragma once

#include <string>
#include <vector>

#include "allocators.h"
#include "record.h"

namespace mh {

struct RunRequest {
  std::string workload;
  std::string binary;             // the workload executable
  std::vector<std::string> args;  // its parameters as the user gave them
  Json params;                    // the resolved values, for the record
  AllocatorSpec allocator;
  int repetition = 0;
  double timeout_s = 600;
  double sample_ms = 10;
  double smaps_ms = 0;
  bool pass_output = false;  // the workload's output to our stderr as well
  std::vector<std::string> declared_metrics;  // a run that lacks one of these failed
};

RunRecord run_one(const RunRequest& req);

// Decides verified and status from what the run produced (pure; tested).
void judge(RunRecord& rec, bool timed_out, int wait_status, const std::string& spawn_error,
           const std::vector<std::string>& declared_metrics = {});

}  // namespace mh
