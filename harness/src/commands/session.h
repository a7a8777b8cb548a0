// What the run and compare commands share: finding the installation layout,
// turning user input into jobs and arms (with exit-2 errors before anything
// runs), and executing a plan while rewriting the report after every run.
// Main thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "options.h"
#include "inputs/pins.h"
#include "inputs/plan.h"
#include "measure/run_settings.h"
#include "report/report_json.h"

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

// harness -- PROGRAM ARGS: the one job of the program, with the settings its
// flags give (program.h); also what a suite's command entry becomes.
std::optional<std::vector<Job>> program_jobs(const Options& o, std::string& error);
Job program_job(Program p);

// An allocator spec, a name from the pins file, or NAME@REV[:options] of a pin
// with a repository (scav@REV; built on demand, exit 2 when the build fails).
std::optional<AllocatorSpec> resolve_allocator(const Layout& l, const std::string& text, std::string& error);
// The pins file: $MEMHARNESS_PINS, else the installed allocators/pins.json.
std::string pins_file(const Layout& l);
// Where pins are built ($MEMHARNESS_PIN_CACHE, else build/pins of the source
// tree) and which tree {memharness} is.
PinPaths pin_paths(const Layout& l);
// The pin of that name with a repository; nullopt naming the ones there are.
std::optional<RepoPin> find_repo_pin(const Layout& l, const std::string& name, std::string& error);

struct Execution {
  std::vector<Job> jobs;
  std::vector<Arm> arms;
  std::vector<PlannedRun> plan;
  RunSettings run;  // every run's: timeout, sampling, memory limit, --after
  bool verbose = false, progress = false;
  std::string out;  // the report, rewritten after every run
  Json context;
  // --resume: runs of an earlier, interrupted execution of the same plan. A
  // planned run that one of them matches is kept, not run again.
  std::vector<RunRecord> kept;
};

// The settings every execution takes from the command line (timeout,
// sampling, memory limit, --after, output); false with the error on bad input.
bool apply_run_options(const Options& o, Execution& e, std::string& error);

struct ExecutionOutcome {
  bool complete = false;   // every planned run is in the report
  int stop_signal = 0;     // the signal that stopped the plan (0: none)
  std::string error;       // the report could not be written (see rescue)
  std::string rescue;      // where the runs went instead, when the report could not be written
  size_t runs_kept = 0;    // taken over from `kept`
  double write_ms = 0;     // spent building and writing the report, all writes together
  size_t report_bytes = 0; // the last report's size
};
// Runs the plan, writing the report after every run; stops early when the
// harness is asked to stop (the run in flight recorded as interrupted) or
// when the report cannot be written. Failed runs are in the records.
ExecutionOutcome execute(const Execution& e, std::vector<RunRecord>& runs);

// --export-markdown / --export-csv: "" when `path` can be written (or is "-",
// stdout), else the error naming the option; checked before anything runs.
std::string check_export(const std::string& path, const std::string& option);
// Writes an export ("-": stdout). Returns "" or the error.
std::string write_export(const std::string& path, const std::string& text);

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
