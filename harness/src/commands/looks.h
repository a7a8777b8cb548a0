// --runs auto in compare and bisect: the rounds of a comparison added look by
// look (compare/sequential.h) for the workloads still undecided, each look
// executed as a plan that keeps the runs already made. Main thread only.
#pragma once

#include <vector>

#include "commands/execute.h"
#include "compare/compare.h"

namespace mh {

// What --runs auto takes from the command line: --max-runs, --alpha, --quiet.
struct LookSettings {
  int max_runs = 20;
  double alpha = 0.05;
  bool quiet = false;
};

// The planned runs of `full` up to round `last`.
std::vector<PlannedRun> rounds_up_to(const std::vector<PlannedRun>& full, int last);

// After each look, the next look's rounds of `full` (planned up to
// --max-runs) for the workloads with a gating metric still unknown, until
// none is or the last look has run; stops too when an execution did not
// complete. `runs` and `outcome` are those of the execution of e.plan (the
// first look's rounds) and become those of the last.
void run_looks(const LookSettings& o, const Thresholds& t, const DeclaredMetrics& declared, Execution& e,
               const std::vector<PlannedRun>& full, std::vector<RunRecord>& runs, ExecutionOutcome& outcome);

}  // namespace mh
