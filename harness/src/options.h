// Harness flags, declared once with their help text and gathered into one
// Options value that is passed down; nothing reads flags from globals.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "history/target.h"
#include "measure/run_settings.h"
#include "report/summary_table.h"

namespace mh {

enum class Command { Run, List, Compare, Merge, Plot, Bisect, Sweep, Squeeze, History, Export, Show, Table, Page };

// harness [OPTIONS] -- PROGRAM [ARGS...]: the flags of a program run, as
// given (program.h checks them, under the keys of a suite's command entry).
struct ProgramFlags {
  std::string name, cwd, stdin_path, load, ready, setup, ready_port;  // ready_port: N or auto
  std::vector<std::string> env, mark_on_output, mark_at, load_metric;
  std::optional<int> expect_exit;
  std::optional<double> ready_timeout, idle, stop_grace;
  bool no_tree = false;
  bool no_exit_stop = false;
};

// The history store (docs/history.md): where run, compare, bisect and sweep
// add their runs (--history), under what revision and machine, and the
// history verbs' own settings.
struct HistoryOptions {
  history::Target target;  // run etc.: file "" adds nothing; history verbs: default kDefaultHistory
  std::string verb;      // add, merge, show, steps, ack, page
  std::string metric, workload, allocator, reason, out;
  std::string repo_url;  // page: each commit links to REPO_URL/commit/SHA
  std::vector<std::string> page_metrics;
  int last = 0;  // steps: exit 1 on a regression among the last N revisions (0: never)
  int min_segment = 2;
  double alpha = 0.05;
};
// harness export: what of a report to write, one of: --folded REPORT (the
// live heap's call sites as folded stacks), --trace REPORT (Chrome trace event
// JSON of every run), --pprof REPORT (a gzipped pprof profile of the live
// heap); for the call sites, at which mark ("" with peak: the peak), of which
// allocator's run ("" : the report's first with call sites).
struct ExportOptions {
  std::string folded, trace, pprof, mark, allocator;
  bool peak = false;
  // --from, --to: the change between two marks of one run (core/mark_diff.h).
  std::string from, to;
};

// harness squeeze (docs/memory-needed.md): the search's stopping width (a
// share of the limit), the extra rounds at each end of the final bracket, the
// rounds a probe may grow to while it cannot be judged, the most limits tried.
struct SqueezeOptions {
  double width = 0.10;
  int confirm_rounds = 3;
  int max_rounds = 20;
  int max_probes = 10;
  // --threshold: the figure of merit's allowed change, in percent; unset: the
  // compare rule's (ci/thresholds.json, else the metric's registry).
  std::optional<double> threshold;
};

inline constexpr const char* kDefaultHistory = "results/history.sqlite";

struct Options {
  Command command = Command::Run;
  // What to run (run and compare).
  std::string workload, suite, shard;
  // --shard auto: what the engine's variables said (inputs/engines.h), recorded
  // in the report; null otherwise. Filled in before the command runs.
  Json shard_engine;
  std::string shard_durations;  // a report of expected run times: balanced shards
  bool dry_run = false;         // print the plan, run nothing
  bool allow_mixed_machines = false;  // merge: a comparison's runs from other machines
  std::vector<std::string> workload_args;  // everything the harness does not know, and --smoke
  std::vector<std::string> program;        // after "--": any program as the workload
  ProgramFlags program_flags;
  bool smoke = false;                      // passed on to the workload, declared here for --help
  std::vector<std::string> allocators;     // run: specs as given; empty = every available built-in
  int runs = 3;                            // --runs; compare and bisect default to kMinRounds (compare.h)
  // compare and bisect --runs auto: rounds added at looks up to max_runs
  // (sequential.h); runs is then the first look's.
  bool runs_auto = false;
  int max_runs = 20;
  // --timeout, --sample-ms, --smaps-ms, --after. Its memory_limit stays 0
  // here: apply_run_options (session.h) parses the text below into the
  // execution's.
  RunSettings run;
  std::string memory_limit;  // --memory-limit as given: "512M"; "" none
  std::string memory_high;   // --memory-high as given; "" none
  std::string heap_sample;   // --heap-sample as given: "512K"; "" none
  std::string soak;          // --soak as given: "10m"; "" none
  // Exports beside the JSON report (run) or comparison (compare): "-" for stdout.
  std::string export_markdown, export_csv;
  // The run table (run and show): its reference allocator, --wide.
  TableSettings table;
  std::string show_format = "table";  // show and table --format: table, markdown, csv
  std::string resume;        // a report to finish
  std::string out;  // run: the report; compare: the comparison JSON; merge: the merged report
  bool quiet = false;
  bool verbose = false;
  // compare
  std::string baseline, candidate;
  // compare --baseline-command/--candidate-command: two programs ('A ARGS', split
  // like shell words) under one allocator, allocators[0] (default glibc)
  std::string baseline_command, candidate_command;
  std::optional<uint64_t> seed;  // order shuffle; drawn and recorded when not given
  std::optional<uint64_t> heap_seed;  // run: the ledger's sampling seed (--heap-seed)
  double alpha = 0.05;
  std::string thresholds;  // "" = the installed ci/thresholds.json
  std::string gate = "declared";  // compare --gate: declared, all or METRIC,...
  std::string report;      // compare: where the runs go
  // compare OLD NEW: the allocator taken from each report ("" = its only one)
  std::string baseline_allocator, candidate_allocator;
  // bisect: the pin with a repository, the two revisions, the metrics that
  // decide (none: any that regresses from good to bad), the walk, the state file
  std::string pin, good, bad, state;
  std::vector<std::string> metrics;
  bool all_parents = false;
  // sweep: grids (FAMILY:opt=a|b|c[,opt2=x|y]) or a preset, the two metrics of
  // the table and plot, and the plot file
  std::vector<std::string> grids;
  std::string preset, x_metric, y_metric, plot;
  // compare OLD NEW, merge A B..., plot REPORT...
  std::vector<std::string> inputs;
  std::vector<std::string> argv;  // the exact command line, for the report
  HistoryOptions history;
  ExportOptions export_options;
  // page REPORT... --out DIR, compare --page DIR: the interactive page's folder
  // and the k of its diff flame graph (page.h).
  std::string page;
  double diff_k = 3.0;
  SqueezeOptions squeeze;
};

struct ParseOutcome {
  std::optional<Options> options;  // set when the command should go on
  int exit_code = 0;               // otherwise: 0 after --help, 2 on bad input
};

ParseOutcome parse_options(int argc, char** argv);

}  // namespace mh
