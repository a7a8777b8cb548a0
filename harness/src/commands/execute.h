// Executing a plan of runs: every planned run in turn, each journaled as it
// ends (so a crash loses only the run in flight), the report written once at
// the end, and --resume, which keeps the runs of an interrupted report (or of
// a journal a crash left) of the same plan.
// Takes its settings as values; main thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "history/target.h"
#include "inputs/plan.h"
#include "measure/run_settings.h"
#include "report/report_read.h"

namespace mh {

struct Execution {
  std::vector<Job> jobs;
  std::vector<Arm> arms;
  std::vector<PlannedRun> plan;
  RunSettings run;  // every run's: timeout, sampling, memory limit, --after
  bool verbose = false, progress = false;
  std::string out;  // the report, written at the end; its journal beside it until then
  Json context;
  // --resume: runs of an earlier, interrupted execution of the same plan. A
  // planned run that one of them matches is kept, not run again.
  std::vector<RunRecord> kept;
  // --history: where the runs are added once the plan has ended.
  history::Target history;
};

struct ExecutionOutcome {
  bool complete = false;   // every planned run is in the report
  int stop_signal = 0;     // the signal that stopped the plan (0: none)
  std::string error;       // the report could not be written (see rescue)
  std::string rescue;      // where the runs went instead, when the report could not be written
  size_t runs_kept = 0;    // taken over from `kept`
  double write_ms = 0;     // spent writing the journal and the report
  size_t report_bytes = 0; // the last report's size
};
// Runs the plan, journaling each finished run, then writes the report; stops
// early when the harness is asked to stop (the run in flight recorded as
// interrupted) or when the journal cannot be written. Failed runs are in the
// records. With a history store, the runs made are added to it at the end.
ExecutionOutcome execute(const Execution& e, std::vector<RunRecord>& runs);

// The identity of a planned run in a report: the same workload, parameters,
// allocator, role and repetition. Used to match the runs of a report to a plan.
std::string run_key(const std::string& workload, const Json& params, const std::string& allocator,
                    const std::string& role, int repetition);
std::string run_key(const RunRecord& r);

// The description of a plan stored in a report's context ("plan"), and the
// difference between a stored one and the one a command asks for ("" when
// they agree): what --resume checks.
Json plan_json(const Execution& e, const Json& extra);
std::string plan_difference(const Json& stored, const Json& asked);

// --resume REPORT: reads it (unless the caller already did), checks its plan
// is `asked`, and returns the runs worth keeping (all but the interrupted
// ones). Errors name the file and the difference.
std::optional<std::vector<RunRecord>> runs_to_resume(const std::string& path, std::optional<ReportData> report,
                                                     const Json& asked, std::string& error);

}  // namespace mh
