// What the commands take from the parsed Options the same way: the jobs of
// --workload, --suite or -- PROGRAM, the thresholds file, the exports, and an
// execution's run settings. The one
// place besides the *_command.cpp files that reads Options, so that
// resolve.h and execute.h take values and never see the command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands/execute.h"
#include "commands/resolve.h"
#include "commands/shard_plan.h"
#include "inputs/engines.h"
#include "options.h"

namespace mh {

// The jobs the options name: a workload or a suite (resolve.h), or the program
// after "--" with the settings its flags give (program.h).
std::optional<std::vector<Job>> jobs_from_options(const Layout& l, const Options& o, std::string& error);

// compare --baseline-command 'A ARGS' --candidate-command 'B ARGS': the two
// programs, each split like shell words (program.h's split_words, no shell)
// and checked with the program flags, both under one name (--name, else the
// programs' base name, joined with -vs- when they differ).
struct CommandSides {
  Program baseline, candidate;
};
std::optional<CommandSides> command_sides_from_options(const Options& o, std::string& error);

// --thresholds, else the installed ci/thresholds.json.
std::string thresholds_file(const Layout& l, const Options& o);

// --export-markdown and --export-csv: "" when both can be written, else the
// error naming the option; checked before anything runs.
std::string check_exports(const Options& o);

// The settings every execution takes from the command line (timeout,
// sampling, memory limit, --after, output); false with the error on bad input.
bool apply_run_options(const Options& o, Execution& e, std::string& error);

// --shard auto or auto/N: the shard the engine's variables say, written back
// into o.shard as I/N with what was read in o.shard_engine; Bazel's status
// file touched. False with the error naming the variables on bad input.
bool resolve_auto_shard(Options& o, const EnvReader& env, std::string& error);

// --shard-durations: cuts e.plan (the whole suite's: jobs_from_options leaves
// the entries whole then) to the shard's balanced units, a comparison's by
// round; records it in `balanced` and the plan's "shard_by". Nothing without
// the option; false with the error on bad input.
// "" unless the command line has what this command does not take: --dry-run
// (a run's: `harness --suite ... --dry-run`), and, with `durations`,
// --shard-durations (run and compare).
std::string refuse_run_only(const Options& o, bool durations);

bool balance_from_options(const Options& o, Execution& e, bool by_round, std::optional<BalancedPlan>& balanced,
                          std::string& error);

}  // namespace mh
