// Command-line declaration (see options.h).
#include "options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <array>
#include <initializer_list>
#include <map>
#include <iostream>
#include <string_view>

#include "compare/compare.h"
#include "compare/squeeze_search.h"
#include "core/escape.h"
#include "core/suggest.h"

namespace mh {

namespace {

// A number from min to max, or the message naming the value and the valid range
// (CLI11 puts the option's name in front).
CLI::Validator in_range(double min, double max, bool whole = false) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        bool number = !text.empty() && *end == '\0' && std::isfinite(v) && (!whole || v == std::floor(v));
        if (number && v >= min && v <= max) return "";
        return fmt::format("'{}' is not {} from {:g} to {:g}", text, whole ? "a whole number" : "a number", min, max);
      },
      fmt::format("{:g} to {:g}", min, max));
}

// One of `names`, stored as its position: the enum declared in their order.
template <size_t N>
CLI::Validator one_of(const char* const (&names)[N]) {
  const std::vector<std::string> list(names, names + N);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        for (size_t i = 0; i < list.size(); ++i)
          if (text == list[i]) {
            text = std::to_string(i);
            return "";
          }
        return fmt::format("'{}' is not one of {}", text, fmt::join(list, ", "));
      },
      fmt::format("{}", fmt::join(list, "|")));
}

// A comparison's rounds: a whole number, or "auto" (the sequential rule).
CLI::Validator rounds_or_auto() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text == "auto") return "";
        char* end = nullptr;
        const long v = std::strtol(text.c_str(), &end, 10);
        if (!text.empty() && *end == '\0' && v >= 1 && v <= 10000) return "";
        return fmt::format("'{}' is neither a whole number of rounds from 1 to 10000 nor auto", text);
      },
      "1 to 10000 or auto");
}

// The usage lines CLI11 cannot derive: what follows the options.
class Usage : public CLI::Formatter {
 public:
  explicit Usage(std::string lines) : lines_(std::move(lines)) {}
  std::string make_usage(const CLI::App*, std::string) const override { return lines_ + "\n"; }

 private:
  std::string lines_;
};

// A subcommand's own help: its usage lines, and after the options its exit codes
// and an example (a subcommand would otherwise show the run's usage, which CLI11
// copies to every subcommand added after it).
void own_help(CLI::App& sub, std::string usage, const std::string& exit_codes, const std::string& example) {
  sub.formatter(std::make_shared<Usage>(std::move(usage)));
  sub.footer("Exit codes: " + exit_codes + "\n\nExample:\n  " + example);
}

// The names of an app's subcommands, in their order.
std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

// The long and short names of an app's options ("--out", "-o").
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// The flags of harness -- PROGRAM ARGS (program.h says what each does).
void add_program_flags(CLI::App& app, ProgramFlags& f) {
  const char* group = "Any program (harness [OPTIONS] -- PROGRAM [ARGS...])";
  app.add_option("--name", f.name, "the program's name in tables and reports (default: its base name)")->group(group);
  app.add_option("--cwd", f.cwd, "the program's working folder")->group(group);
  app.add_option("--env", f.env, "KEY=VALUE added to the program's environment, repeatable")->group(group);
  app.add_option("--stdin", f.stdin_path, "the program's standard input (default /dev/null)")->group(group);
  app.add_option("--expect-exit", f.expect_exit, "the exit status of a run that is ok (default 0)")
      ->check(in_range(0, 255, true))
      ->group(group);
  app.add_option("--mark-on-output", f.mark_on_output,
                 "REGEX[=NAME]: a mark at every line of the program's output that matches (POSIX extended), "
                 "repeatable")
      ->group(group);
  app.add_option("--mark-at", f.mark_at, "MS[=NAME]: a mark MS milliseconds after the start, repeatable")->group(group);
  app.add_option("--load", f.load,
                 "'PROGRAM ARGS' (split like shell words, no shell): a load generator started once the program is "
                 "ready, in its own process group, without the allocator under test, counted in none of the "
                 "program's figures")
      ->group(group);
  app.add_option("--ready", f.ready, "REGEX: the program is ready at the first output line that matches")->group(group);
  app.add_option("--ready-port", f.ready_port,
                 "N: the program is ready once a TCP connect to 127.0.0.1:N succeeds; auto: a free port for each run, "
                 "written where the program's arguments, --load or an --env value say {port}")
      ->group(group);
  app.add_option("--ready-timeout", f.ready_timeout, "seconds to wait for --ready or --ready-port (default 30)")
      ->check(in_range(0.1, 86400.0))
      ->group(group);
  app.add_option("--idle", f.idle,
                 "S: after the load ends (or after ready without --load) the program idles S seconds, then is stopped "
                 "with SIGTERM (SIGKILL after --stop-grace); that stop is not a failure")
      ->check(in_range(0.0, 86400.0))
      ->group(group);
  app.add_option("--stop-grace", f.stop_grace,
                 "seconds between SIGTERM and SIGKILL when the program is stopped (default 2)")
      ->check(in_range(0.0, 600.0))
      ->group(group);
  app.add_option("--load-metric", f.load_metric,
                 "NAME=REGEX: the first capture group of the load generator's last matching output line, a number, "
                 "becomes the metric workload.NAME; repeatable")
      ->group(group);
  app.add_option("--setup", f.setup,
                 "'PROGRAM ARGS' (split like shell words, no shell): run to completion before each run, unmeasured and "
                 "without the allocator, to make the program's inputs; both run in --cwd, else in the run's "
                 "temporary directory (removed after the run)")
      ->group(group);
  app.add_flag("--no-tree", f.no_tree,
               "sample the started process only; by default each sample sums it and its live descendants (a "
               "compiler driver and the compiler it runs)")
      ->group(group);
  app.add_flag("--no-exit-stop", f.no_exit_stop,
               "do not hold the program at its exit (ptrace) to read its exact peak; its signals then do not pass "
               "through the harness, and peak_rss_kb is wait4's or the samples'")
      ->group(group);
}

// Whether the command line has one of `flags` (also as --flag=VALUE).
bool given(const Options& o, std::initializer_list<std::string_view> flags) {
  return std::any_of(o.argv.begin(), o.argv.end(), [&](std::string_view arg) {
    return std::any_of(flags.begin(), flags.end(),
                       [&](std::string_view f) { return arg == f || (arg.starts_with(f) && arg[f.size()] == '='); });
  });
}

void add_what_to_run(CLI::App& app, Options& o) {
  app.add_option("-w,--workload", o.workload, "workload to run (see --list); its parameters follow it");
  app.add_flag("--smoke", o.smoke, "a workload parameter every workload takes: its small, fast version (see --list)");
  app.add_option("--suite", o.suite, "a suite of workloads instead (workloads/suites.json): quick (smoke sizes), seeds (seed sizes), idle (idle figures), apps, apps-smoke (real programs)");
  app.add_option("--shard", o.shard,
                 "run only shard I/N of the suite (for a CI job matrix), e.g. 2/4; auto (or auto/N): the shard the "
                 "engine's variables say (Slurm arrays, Kubernetes Indexed Jobs, GitLab, Buildkite, CircleCI, Bazel, "
                 "GoogleTest: docs/many-machines.md)");
  app.add_option("--shard-durations", o.shard_durations,
                 "with --shard: balance the shards by the runs' expected time, read from a previous report (or "
                 "merged shards) of the suite; a shard then holds some allocators of an entry (a comparison: some "
                 "rounds), not whole entries");
  app.add_flag("--dry-run", o.dry_run,
               "print the plan (the runs this shard would make, and with --shard-durations every shard's expected "
               "time) and run nothing");
  app.add_option("--timeout", o.run.timeout_s, "seconds before a run is killed (SIGTERM, then SIGKILL)")
      ->check(in_range(0.1, 86400.0))
      ->capture_default_str();
  app.add_option("--leftovers", o.run.leftovers,
                 "what becomes of the processes a run leaves running when its program has ended (a daemon, a "
                 "background child), each named in the run's leftover_processes: kill (default: killed, the run "
                 "stays ok), fail (killed, the run failed), allow (left running)")
      ->transform(one_of(kLeftoversNames));
  app.add_flag("--ledger", o.run.ledger,
               "preload the heap ledger ahead of the allocator: every sample gets the live heap (heap_live_kb) and "
               "the anonymous memory outside it; adds a few ns to every allocation (docs/heap-ledger.md)");
  app.add_option("--sample-ms", o.run.sample_ms, "sampling interval in milliseconds (at least 1)")
      ->check(in_range(1.0, 60000.0))
      ->capture_default_str();
  app.add_option("--smaps-ms", o.run.smaps_ms,
                 "also read smaps_rollup (AnonHugePages, LazyFree) at most every this many ms; 0: at marks only. It walks "
                 "every page table under the workload's mmap lock, which stalls the workload's mmap and munmap")
      ->check(in_range(0.0, 60000.0))
      ->capture_default_str();
  app.add_option("--symbolize-timeout", o.run.symbolize.timeout_s,
                 "seconds the naming of a run's call sites (--heap-sample) may take, in a process of its own: past "
                 "them it is killed and the frames not named keep their object and offset, with the reason")
      ->check(in_range(0.1, 86400.0))
      ->capture_default_str();
  app.add_flag("--debuginfod", o.run.symbolize.debuginfod,
               "let the naming of call sites fetch debug files from the servers DEBUGINFOD_URLS names (by default "
               "the variable is removed for it: the build IDs are the program's to choose)");
  app.add_option("--heap-sample", o.heap_sample,
                 "with --ledger: sample allocations every SIZE bytes on average (K, M suffixes; jemalloc's default is "
                 "512K) and record the live heap by call site at every mark (heap_sites; docs/heap-ledger.md)");
  app.add_option("--soak", o.soak,
                 "run each job for DURATION (30s, 10m, 1h): a workload or program started again each time it ends, a "
                 "server's load generator run again until then; the sampled series kept bounded (docs/measuring.md)");
  app.add_option("--memory-limit", o.memory_limit,
                 "limit each run's memory to SIZE (K, M, G suffixes): a memory cgroup of its own where the machine "
                 "allows one, else RLIMIT_AS (the report says which); a run the kernel kills for it is 'oom'");
  app.add_option("--memory-high", o.memory_high,
                 "throttle each run's memory above SIZE (K, M, G suffixes): cgroup v2 memory.high, where the kernel "
                 "reclaims and slows the run past it but never kills it; refused where the memory controller is not "
                 "cgroup v2's (docs/memory-needed.md)");
  app.add_option("--resume", o.resume,
                 "finish REPORT, a report left incomplete by an interruption: the same command again, the runs it "
                 "holds kept and only the missing ones run, into the same file");
  app.add_option("--after", o.run.after_mark,
                 "the mark after which the after.* metrics are measured (RSS at +0.1 s, +1 s, +10 s; time to give "
                 "back half and 90% of the memory above the start): default the workload's idle mark, else the "
                 "run's last mark");
  app.add_option("--export-markdown", o.export_markdown,
                 "also write the table as markdown to FILE (- for stdout): the summary, or the comparison");
  app.add_option("--export-csv", o.export_csv,
                 "also write CSV to FILE (- for stdout): every metric's median, min, max and n per workload and "
                 "allocator, or the comparison's rows");
  // Only with a program: a workload's own parameters may have the same names (server-echo --idle).
  if (!o.program.empty() || given(o, {"--help", "-h", "--baseline-command", "--candidate-command"}))
    add_program_flags(app, o.program_flags);
  app.add_option("--history", o.history.target.file,
                 "also add the runs to this history store when they are done (docs/history.md)");
  app.add_option("--revision", o.history.target.revision,
                 "with --history: the revision measured (default: the pin's, else git HEAD of --cwd, else this "
                 "harness's)");
  app.add_option("--machine", o.history.target.machine, "with --history: the machine's name there (default the host name)");
  app.add_flag("-q,--quiet", o.quiet, "no progress line");
  app.add_flag("-v,--verbose", o.verbose, "copy each workload's output to stderr, and say what writing the report cost");
}

// How the run table is drawn (run and show).
// The diff flame graph's k: a frame's change counts past k standard errors.
void add_diff_k(CLI::App& app, double& k) {
  app.add_option("--diff-k", k,
                 "the diff flame graph colours a frame whose own bytes changed by more than K standard errors of "
                 "the difference (the rest grey)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

void add_table_options(CLI::App& app, TableSettings& t) {
  app.add_option("--reference", t.reference,
                 "the allocator the table's ratio column divides by (default: the first --allocator, or the first "
                 "of the report); exit 2 naming the valid ones when there is no such allocator");
  app.add_flag("--wide", t.wide, "print every column of the table, however wide (default: fit 160 columns)");
}

// A comparison's rounds and rule, as compare and bisect both take them.
void add_rule_options(CLI::App& app, Options& o, std::string& runs, const std::string& runs_help,
                      const std::string& seed_help) {
  app.add_option("-n,--runs", runs,
                 runs_help + "; auto: start with 5 and add rounds at looks 8, 12, 20, ... up to --max-runs until "
                             "every gating metric is a regression, an improvement or the same")
      ->check(rounds_or_auto())
      ->capture_default_str();
  app.add_option("--max-runs", o.max_runs, "with --runs auto: the most rounds")
      ->check(in_range(kMinRounds, 10000, true))
      ->capture_default_str();
  app.add_option("--seed", o.seed, seed_help);
  app.add_option("--alpha", o.alpha, "significance level of the Mann-Whitney test")
      ->check(in_range(0.0001, 0.5))
      ->capture_default_str();
  app.add_option("--thresholds", o.thresholds, "metric directions and thresholds (default ci/thresholds.json)");
}

// Everything after the first "--" is the program to run (plot passes its
// arguments on as they are). Returns how many arguments are left for CLI11,
// or -1 when nothing follows "--".
int split_program(int argc, char** argv, Options& o) {
  if (argc <= 1 || std::string(argv[1]) == "plot") return argc;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--") {
      o.program.assign(argv + i + 1, argv + argc);
      return o.program.empty() ? -1 : i;
    }
  return argc;
}

// The command line as CLI11 declares it: the top-level app (a run) and one
// subcommand per verb, each declared by its add_*_command and turned into the
// Options of that verb by its *_chosen once parsed. What a verb parses beyond
// Options (its own --runs default, compare's --allocator) waits here until the
// verb is known.
class CommandLine {
 public:
  explicit CommandLine(Options o);
  ParseOutcome parse(int argc, char** argv);

 private:
  void add_run_command();
  CLI::App* add_compare_command();
  CLI::App* add_bisect_command();
  CLI::App* add_sweep_command();
  CLI::App* add_squeeze_command();
  CLI::App* add_merge_command();
  CLI::App* add_plot_command();
  CLI::App* add_export_command();
  CLI::App* add_show_command();
  CLI::App* add_table_command();
  CLI::App* add_page_command();
  CLI::App* add_history_command();

  std::string chosen_help() const;
  std::string unknown_command(int argc, char** argv) const;
  std::string suggestion(int argc, char** argv) const;
  ParseOutcome chosen();
  ParseOutcome run_chosen();
  ParseOutcome compare_chosen();
  ParseOutcome workloads_chosen(CLI::App& sub, Command command, int runs);
  // compare and bisect: --runs N, or auto (the first look's rounds, and runs_auto).
  void take_rounds(const std::string& runs);
  // The extras CLI11 left, the workload's parameters, with --smoke first when given.
  void take_workload_args(std::vector<std::string> extras);

  Options o_;
  CLI::App app_;
  bool list_ = false;
  // A comparison's rounds (compare, and each step of bisect) and a sweep's
  // repetitions (as many as a run's): Options holds the chosen verb's.
  std::string compare_runs_ = std::to_string(kMinRounds), bisect_runs_ = std::to_string(kMinRounds);
  int sweep_runs_;
  std::string both_allocator_;  // compare --allocator: the allocator of both reports
  CLI::App *compare_ = nullptr, *bisect_ = nullptr, *sweep_ = nullptr, *merge_ = nullptr, *plot_ = nullptr;
  CLI::App* squeeze_ = nullptr;
  int squeeze_rounds_ = squeeze::kFirstRounds;
  CLI::App* export_ = nullptr;
  CLI::App* show_ = nullptr;
  CLI::App* table_ = nullptr;
  CLI::App* page_ = nullptr;
  CLI::App* history_ = nullptr;
};

CommandLine::CommandLine(Options o)
    : o_(std::move(o)),
      app_("memharness: runs a workload in a child process under each allocator, samples its memory from outside, "
           "and writes a JSON report.\nWorkload parameters follow the workload: harness --workload burst-writefile "
           "--calls 100 --release-on-pool",
           "harness"),
      sweep_runs_(o_.runs) {
  add_run_command();
  compare_ = add_compare_command();
  bisect_ = add_bisect_command();
  sweep_ = add_sweep_command();
  squeeze_ = add_squeeze_command();
  merge_ = add_merge_command();
  plot_ = add_plot_command();
  export_ = add_export_command();
  show_ = add_show_command();
  table_ = add_table_command();
  page_ = add_page_command();
  history_ = add_history_command();
}

void CommandLine::add_run_command() {
  app_.allow_extras();
  app_.formatter(std::make_shared<Usage>(
      "Usage: harness [OPTIONS] --workload NAME [PARAMETERS...]\n"
      "   or: harness [OPTIONS] --suite NAME\n"
      "   or: harness [OPTIONS] -- PROGRAM [ARGS...]    (any program, argv as given, no shell)\n"
      "   or: harness --list\n"
      "   or: harness compare|bisect|sweep|squeeze|merge|plot|export|show|table|page|history ... (each with its own --help)"));
  app_.footer(
      "Workload parameters (harness --list shows each workload's, with defaults) follow the workload. Every "
      "workload also takes --smoke: a small, fast version, what the tests run.\n\n"
      "Exit codes: 0 every run ok, 1 a run failed (crashed, timed out, exited non-zero, or under another "
      "allocator than asked), 2 bad input (nothing was run).");
  add_what_to_run(app_, o_);
  app_.add_option("-a,--allocator", o_.allocators,
                  "allocator to run under, repeatable: glibc, jemalloc, mimalloc, tcmalloc, scav, NAME=/path/lib.so, "
                  "scav@REV, or a name from allocators/pins.json; options after a colon: "
                  "jemalloc:background_thread=true,dirty_decay_ms=100 (default: every available built-in)");
  app_.add_option("-n,--runs", o_.runs, "repetitions of each allocator, interleaved")
      ->check(in_range(1, 10000, true))
      ->capture_default_str();
  app_.add_option("-o,--out", o_.out,
                  "report file, replaced if it exists (default results/<workload>-<UTC time>.json, never an existing "
                  "file)");
  app_.add_option("--heap-seed", o_.heap_seed,
                  "with --heap-sample: the seed of the ledger's sampling generator (default: the ledger's own, fixed)");
  app_.add_option("--seed", o_.seed,
                  "after --workload NAME: the workload's own --seed (every workload that draws random numbers has "
                  "one); with a program or a suite: --heap-seed");
  app_.add_flag("-l,--list", list_, "list the workloads and their parameters");
  add_table_options(app_, o_.table);
}

CLI::App* CommandLine::add_compare_command() {
  CLI::App* compare = app_.add_subcommand(
      "compare",
      "compare two pins: baseline, candidate and baseline again, interleaved in shuffled order for --runs rounds; "
      "or two programs under one allocator the same way (--baseline-command, --candidate-command); "
      "or compare two existing reports: harness compare OLD.json NEW.json");
  compare->footer(
      "Exit codes: 0: no gated metric regressed, 1: a gated metric regressed, 2: bad input (nothing was compared), "
      "4: incomplete (a run failed, or the runs report is of a comparison that did not finish), 128+N: stopped by "
      "signal N (incomplete too; --resume finishes it). The headline, the first line, says which (docs/compare.md).\n\n"
      "Example:\n  harness compare --baseline jemalloc --candidate scav -w idle-return --runs 5");
  compare->allow_extras();
  compare->formatter(std::make_shared<Usage>(
      "Usage: harness compare [OPTIONS] --baseline PIN --candidate PIN --workload NAME [PARAMETERS...]\n"
      "   or: harness compare [OPTIONS] --baseline PIN --candidate PIN --suite NAME\n"
      "   or: harness compare [OPTIONS] --baseline PIN --candidate PIN -- PROGRAM [ARGS...]\n"
      "   or: harness compare [OPTIONS] [-a PIN] --baseline-command 'A ARGS' --candidate-command 'B ARGS'\n"
      "   or: harness compare [OPTIONS] OLD.json NEW.json    (two reports; --allocator NAME for reports of "
      "several)\n"
      "   or: harness compare [OPTIONS] RUNS.json            (the runs report of a comparison, or merged shards)"));
  add_what_to_run(*compare, o_);
  compare->add_option("--baseline", o_.baseline, "the baseline pin (an allocator spec, a pins-file name or scav@REV)");
  compare->add_option("--candidate", o_.candidate, "the candidate pin");
  compare->add_option("--baseline-command", o_.baseline_command,
                      "'PROGRAM ARGS' (split like shell words, no shell): the baseline program, compared with "
                      "--candidate-command under one allocator (-a, default glibc) instead of two pins; the program "
                      "flags (--env, --ready, --load, --mark-on-output, ...) apply to both");
  compare->add_option("--candidate-command", o_.candidate_command, "'PROGRAM ARGS': the candidate program");
  add_rule_options(*compare, o_, compare_runs_, fmt::format("rounds (fewer than {} prints a warning)", kMinRounds),
                   "seed of the per-round order shuffle (default: drawn, and recorded)");
  compare->add_option("-o,--out", o_.out,
                      "the comparison JSON, replaced if it exists (default results/compare-<UTC time>.json, never "
                      "an existing file)");
  compare->add_option("--report", o_.report, "where the runs go (default: the comparison's name with -runs.json)");
  compare->add_option("--gate", o_.gate,
                      "which metrics decide the verdict: declared (each workload's own set, --list shows it; the "
                      "thresholds file's \"gate\" changes it), all (every metric with a direction), or METRIC,... "
                      "(patterns, WORKLOAD:METRIC for one workload's); the others are compared and reported")
      ->capture_default_str();
  compare->add_option("--markdown", o_.export_markdown, "the same as --export-markdown");
  compare->add_option("--page", o_.page,
                      "also write the comparison's interactive page into this folder (the verdict, each metric's "
                      "runs side by side, memory over time, the flame graphs; harness page --help)");
  add_diff_k(*compare, o_.diff_k);
  compare->add_option("-a,--allocator", both_allocator_,
                      "two reports: compare the runs of this allocator in both (for reports of several allocators); "
                      "two commands: the allocator both run under (default glibc)");
  compare->add_option("--baseline-allocator", o_.baseline_allocator, "two reports: the allocator of OLD.json");
  compare->add_option("--candidate-allocator", o_.candidate_allocator, "two reports: the allocator of NEW.json");
  return compare;
}

CLI::App* CommandLine::add_bisect_command() {
  CLI::App* bisect = app_.add_subcommand(
      "bisect",
      "find the commit of a pin's repository that made a regression: checks that --good and --bad differ, then "
      "builds and compares (as harness compare: rounds of good, commit, good again) the commits between them, "
      "halving the range each step; a commit that does not build is skipped. Exit 0 found, 1 a run failed, 2 bad "
      "input or good and bad do not differ");
  bisect->allow_extras();
  bisect->formatter(std::make_shared<Usage>(
      "Usage: harness bisect [OPTIONS] --pin NAME --good REV --bad REV (--workload NAME [PARAMETERS...] | --suite "
      "NAME)"));
  bisect->footer("Exit codes: 0 the commit was found, 1 a run failed, 2 bad input, or good and bad do not differ\n\n"
                 "Example:\n  harness bisect --pin scav --good v1.0 --bad main -w idle-return --runs 5");
  add_what_to_run(*bisect, o_);
  bisect->add_option("--pin", o_.pin, "a pin with a repository in allocators/pins.json (scav, ...)")->required();
  bisect->add_option("--good", o_.good, "a revision without the regression")->required();
  bisect->add_option("--bad", o_.bad, "a later revision with it")->required();
  bisect->add_option("--metric", o_.metrics,
                     "the metric that decides, repeatable (default: every metric that regresses from good to bad); "
                     "the comparison tests only these");
  add_rule_options(*bisect, o_, bisect_runs_, "rounds of each comparison",
                   "seed of the order shuffle of every step (default: drawn, and recorded)");
  bisect->add_flag("--all-parents", o_.all_parents,
                   "walk every commit between good and bad, not only the first-parent line (git rev-list)");
  bisect->add_option("--state", o_.state,
                     "the state file, which an interrupted bisect resumes from (default "
                     "results/bisect-PIN-GOOD-BAD/state.json; each step's comparison goes beside it)");
  return bisect;
}

CLI::App* CommandLine::add_sweep_command() {
  CLI::App* sweep = app_.add_subcommand(
      "sweep",
      "run an allocator over a grid of one or two options, interleaved, and tabulate and plot two metrics of each "
      "point, marking the points no other beats on both (the Pareto front)");
  sweep->allow_extras();
  sweep->formatter(std::make_shared<Usage>(
      "Usage: harness sweep [OPTIONS] (--allocator 'FAMILY:opt=a|b|c[,opt2=x|y]' | --preset NAME) "
      "(--workload NAME [PARAMETERS...] | --suite NAME)"));
  sweep->footer("Exit codes: 0 every run ok, 1 a run failed, 2 bad input (nothing was run)\n\n"
                "Example:\n  harness sweep --preset scav-purge -w idle-return --runs 3 --plot sweep.png");
  add_what_to_run(*sweep, o_);
  sweep->add_option("-a,--allocator", o_.grids,
                    "a grid: an allocator with one or two options whose values are separated by |, e.g. "
                    "scav:purge_delay_ms=10|100|1000; repeatable (the grids' points run together)");
  sweep->add_option("--preset", o_.preset,
                    "a built-in grid: scav-purge, jemalloc-decay, jemalloc-decay-bg, mimalloc-purge, "
                    "tcmalloc-release");
  sweep->add_option("-n,--runs", sweep_runs_, "repetitions of each point, interleaved")
      ->check(in_range(1, 10000, true))
      ->capture_default_str();
  sweep->add_option("--x", o_.x_metric, "the metric across (default rss_area_mb_s)");
  sweep->add_option("--y", o_.y_metric, "the metric up (default minflt)");
  sweep->add_option("-o,--out", o_.out,
                    "the report of every run (default results/sweep-<workload>-<UTC time>.json); the sweep's table "
                    "goes beside it as -sweep.json");
  sweep->add_option("--plot", o_.plot, "also draw the two metrics of every point to this .png or .svg");
  return sweep;
}

CLI::App* CommandLine::add_squeeze_command() {
  CLI::App* squeeze = app_.add_subcommand(
      "squeeze",
      "find, for each allocator, the smallest --memory-limit at which a run keeps its speed: a log-scale bisection "
      "from the unlimited cgroup peak down, each limit tried in rounds of unlimited, limited and unlimited again "
      "(interleaved) and judged by the compare rule on a figure of merit; no OOM kill and no failed run allowed. "
      "The final bracket gets extra rounds at both ends (docs/memory-needed.md)");
  squeeze->allow_extras();
  squeeze->formatter(std::make_shared<Usage>(
      "Usage: harness squeeze [OPTIONS] [-a ALLOCATOR]... (--workload NAME [PARAMETERS...] | --suite NAME | -- "
      "PROGRAM [ARGS...])"));
  squeeze->footer(
      "Exit codes: 0 a limit found for every allocator, 1 a run or the plot failed or a search found no limit, 2 bad "
      "input (nothing was run), 130 stopped by Ctrl-C (what was measured is kept: the same command with -o FILE goes "
      "on)\n\nExample:\n  harness squeeze -w burst-writefile -a glibc -a jemalloc --runs 3 -o squeeze.json --plot "
      "squeeze.png");
  add_what_to_run(*squeeze, o_);
  squeeze->add_option("-a,--allocator", o_.allocators,
                      "allocator to search for, repeatable (default: every available built-in)");
  squeeze->add_option("-n,--runs", squeeze_rounds_, "rounds of each limit tried (unlimited, limited, unlimited)")
      ->check(in_range(1, 1000, true))
      ->capture_default_str();
  squeeze->add_option("--confirm-rounds", o_.squeeze.confirm_rounds,
                      "extra rounds at each end of the final bracket")
      ->check(in_range(0, 1000, true))
      ->capture_default_str();
  squeeze->add_option("--max-rounds", o_.squeeze.max_rounds,
                      "the rounds a limit may grow to, 3 at a time, while its interval reaches both sides of the "
                      "threshold; past them it is on the threshold, inside the bracket")
      ->check(in_range(1, 1000, true))
      ->capture_default_str();
  squeeze->add_option("--width", o_.squeeze.width,
                      "stop when the bracket (largest limit shown slower, smallest shown to keep the speed) is within "
                      "this share of the limit, or when the limits on the threshold inside it leave no gap beside them "
                      "wider than half of it")
      ->check(in_range(0.01, 0.9))
      ->capture_default_str();
  squeeze->add_option("--max-probes", o_.squeeze.max_probes, "the most limits tried per allocator")
      ->check(in_range(2, 100, true))
      ->capture_default_str();
  squeeze->add_option("--threshold", o_.squeeze.threshold,
                      "how much worse than unlimited the figure of merit may be at a limit that keeps the speed, in "
                      "percent (default: its compare threshold, wall_ms 10%); below the cost's level where the limit "
                      "first bites, the bracket finds where that cost begins")
      ->check(in_range(0.1, 1000.0));
  squeeze->add_option("--metric", o_.metrics,
                      "the figure of merit (default: the workload's own first result with a direction, else wall_ms): "
                      "wall_ms, cpu_ms, or a figure the workload declares or a program's --load-metric gives "
                      "(workload.NAME)");
  squeeze->add_option("--seed", o_.seed, "seed of the order shuffle of the rounds (default: drawn, and recorded)");
  squeeze->add_option("--thresholds", o_.thresholds, "metric directions and thresholds (default ci/thresholds.json)");
  squeeze->add_option("-o,--out", o_.out,
                      "the squeeze's JSON, written after every limit tried (default results/squeeze-<workload>-<UTC "
                      "time>.json; an existing one of the same squeeze is resumed); the runs go beside it in -runs/");
  squeeze->add_option("--plot", o_.plot, "also draw the change of the figure of merit under each limit and the stall against the limit (.png or .svg)");
  return squeeze;
}

CLI::App* CommandLine::add_merge_command() {
  CLI::App* merge = app_.add_subcommand(
      "merge",
      "join reports (the shards of a job matrix, or runs of other allocators or workloads) into one; refuses, with "
      "exit 2, the same run twice, a workload under other parameters, and reports of other suites or pins");
  merge->allow_extras(false);  // CLI11 copies the run's allow_extras to every subcommand
  own_help(*merge, "Usage: harness merge REPORT... -o OUT.json",
           "0 joined, 2 bad input (a report unreadable, the same run twice, other plans); nothing is written then",
           "harness merge shard-1.json shard-2.json shard-3.json -o all.json");
  merge->add_option("reports", o_.inputs, "the reports to join")->required()->check(CLI::ExistingFile);
  merge->add_option("-o,--out", o_.out, "the joined report")->required();
  merge->add_flag("--allow-mixed-machines", o_.allow_mixed_machines,
                  "join the runs of one comparison made on other machines (refused by default: the two sides of a "
                  "comparison are compared fairly only on one machine)");
  return merge;
}

CLI::App* CommandLine::add_plot_command() {
  CLI::App* plot = app_.add_subcommand(
      "plot", "draw a picture with matplotlib: harness plot KIND ... -o FILE.png, KIND one of rss (RSS over time, "
              "the default), heap (the live heap beside RSS), compare (a comparison), flame (the live heap by call "
              "site), sweep (a sweep's points), table (the allocator matrix), squeeze (a squeeze's limits); the arguments go to scripts/plot_KIND.py (harness plot --help)");
  plot->prefix_command();
  plot->set_help_flag();  // --help goes to the plot command, which shows the scripts' own
  return plot;
}

CLI::App* CommandLine::add_show_command() {
  CLI::App* show = app_.add_subcommand(
      "show", "print a report's table again: the summary of its runs, as the run printed it (a table, markdown or CSV)");
  show->allow_extras(false);
  own_help(*show, "Usage: harness show REPORT [--format table|markdown|csv] [--reference NAME] [--wide]",
           "0 printed, 2 bad input (the report unreadable, an unknown --reference or --format)",
           "harness show results/reference/idle-return.json --reference glibc");
  show->add_option("report", o_.inputs, "the report (or the journal of an unfinished one)")->required()->expected(1);
  show->add_option("--format", o_.show_format,
                   "table (the terminal's), markdown (as --export-markdown writes it) or csv (as --export-csv)")
      ->check(CLI::IsMember({"table", "markdown", "csv"}))
      ->capture_default_str();
  add_table_options(*show, o_.table);
  return show;
}

CLI::App* CommandLine::add_table_command() {
  CLI::App* table = app_.add_subcommand(
      "table", "the allocator matrix of any reports: workloads against allocators, each cell the median over the "
               "row's best allocator's, with its interval (a table, markdown or CSV; harness plot table draws it)");
  table->allow_extras(false);
  own_help(*table, "Usage: harness table REPORT... [--format table|markdown|csv] [--metric NAME]...",
           "0 printed, 2 bad input (a report unreadable or given twice, a workload run with other parameters in two "
           "reports, an unknown --metric or --format)",
           "harness table results/reference/idle-return.json --metric peak_rss_kb");
  table->add_option("reports", o_.inputs, "the reports (or journals): shards and sittings pool into one matrix")
      ->required();
  table->add_option("--format", o_.show_format, "table (the terminal's), markdown (best in bold) or csv")
      ->check(CLI::IsMember({"table", "markdown", "csv"}))
      ->capture_default_str();
  table->add_option("--metric", o_.metrics,
                    "a table of this figure for every workload that has it (repeatable; default: each workload's "
                    "headline figures, else peak RSS and CPU time)");
  return table;
}

CLI::App* CommandLine::add_page_command() {
  CLI::App* page = app_.add_subcommand(
      "page", "write an interactive page of reports into --out DIR: memory over time with zoom, the run table, the "
              "flame graph of the live heap and its diff (opens from file://, nothing fetched)");
  page->allow_extras(false);
  own_help(*page, "Usage: harness page REPORT... --out DIR [--diff-k K]",
           "0 written, 2 bad input (a report unreadable, DIR not writable, a library of the page missing)",
           "harness page results/reference/idle-return.json --out results/idle-return-page");
  page->add_option("reports", o_.inputs, "the reports (or journals), each shown; two with heap sites are diffed")
      ->required()
      ->check(CLI::ExistingFile);
  page->add_option("--out", o_.page, "the folder of the page (index.html and its libraries)")->required();
  add_diff_k(*page, o_.diff_k);
  return page;
}

CLI::App* CommandLine::add_export_command() {
  ExportOptions& e = o_.export_options;
  CLI::App* exp = app_.add_subcommand(
      "export", "write a view of a report for another viewer: --folded (folded stacks for flamegraph.pl, inferno or "
                "speedscope), --pprof (a gzipped profile.proto for go tool pprof) of the live heap by call site "
                "(--heap-sample); --trace (Chrome trace event JSON of every run's memory over time for Perfetto's "
                "UI or chrome://tracing)");
  exp->allow_extras(false);
  own_help(*exp,
           "Usage: harness export (--folded REPORT | --trace REPORT | --pprof REPORT) [--mark NAME | --peak | --from MARK "
           "--to MARK] [--allocator NAME] [-o FILE]",
           "0 written, 2 bad input (the report unreadable, or without call sites; an unknown mark or allocator)",
           "harness export --pprof results/app.json --mark all-done -o app.pb.gz");
  auto* what = exp->add_option_group("what", "what to write, one of");
  what->add_option("--folded", e.folded, "the live heap's call sites of REPORT (written with --ledger --heap-sample)")
      ->check(CLI::ExistingFile);
  what->add_option("--trace", e.trace, "every run of REPORT: RSS, anonymous RSS, live heap and faults, and marks")
      ->check(CLI::ExistingFile);
  what->add_option("--pprof", e.pprof,
                   "the live heap's call sites of REPORT (written with --ledger --heap-sample) as a gzipped "
                   "profile.proto; needs -o")
      ->check(CLI::ExistingFile);
  what->require_option(1);
  auto* mark = exp->add_option("--mark", e.mark, "the mark whose call sites to write (default: the peak)");
  exp->add_flag("--peak", e.peak,
                "the call sites at the peak: the run's peak snapshot, else the mark with the largest live heap (the "
                "default)")
      ->excludes(mark);
  auto* from = exp->add_option("--from", e.from,
                               "with --to: the change of the live heap by call site between two marks of one run, as "
                               "differential folded stacks (STACK BYTES_AT_FROM BYTES_AT_TO, inferno's and "
                               "flamegraph.pl's difffolded form); the sites that changed most, with their errors, "
                               "to stderr");
  auto* to = exp->add_option("--to", e.to, "the later mark of --from");
  from->needs(to)->excludes(mark);
  to->needs(from)->excludes(mark);
  exp->add_option("--allocator", e.allocator, "the allocator whose run to write (default: the first with call sites)");
  exp->add_option("-o,--out", o_.out, "the output file, - for standard output (the default; not for --pprof)");
  return exp;
}

// Each history verb's usage, exit codes and example.
const std::map<std::string, std::array<std::string, 3>> kHistoryVerbHelp = {
    {"add",
     {"Usage: harness history add REPORT... [--history FILE] [--revision REV] [--cwd DIR] [--machine NAME]",
      "0 added, 2 bad input (a report or the store unreadable)", "harness history add results/*.json --revision v1.2"}},
    {"merge",
     {"Usage: harness history merge STORE OTHER... ", "0 merged, 2 bad input (a store unreadable)",
      "harness history merge results/history.sqlite runner-2.sqlite"}},
    {"show",
     {"Usage: harness history show --workload NAME --metric NAME [--allocator NAME] [--machine NAME]",
      "0 shown, 2 bad input (no such series: the store's workloads and metrics are listed)",
      "harness history show --workload idle-return --metric peak_rss_kb --allocator scav"}},
    {"steps",
     {"Usage: harness history steps [--workload NAME] [--metric NAME] [--allocator NAME] [--last N]",
      "0 no regression step among the last --last revisions that is not acknowledged, 1 one is, 2 bad input",
      "harness history steps --last 1"}},
    {"page",
     {"Usage: harness history page --out DIR [--workload NAME] [--metric NAME] [--allocator NAME] [--repo-url URL]",
      "0 written, 2 bad input (the store unreadable, DIR not writable)", "harness history page --out results/page"}},
    {"ack",
     {"Usage: harness history ack --workload NAME --metric NAME --allocator NAME --revision REV --reason TEXT",
      "0 acknowledged, 2 bad input (no such step)",
      "harness history ack --workload idle-return --metric peak_rss_kb --allocator scav --revision 3e12765 "
      "--reason 'larger arenas, intended'"}},
};

// harness history VERB: the store's verbs, each with the options it reads.
CLI::App* CommandLine::add_history_command() {
  HistoryOptions& h = o_.history;
  CLI::App* history = app_.add_subcommand(
      "history", "the history store: runs across revisions, their series, steps and a dashboard (docs/history.md)");
  history->require_subcommand(1);
  history->allow_extras(false);
  own_help(*history, "Usage: harness history add|merge|show|steps|page|ack [OPTIONS]  (each with its own --help)",
           "those of each verb (harness history VERB --help)", "harness history add results/*.json");
  auto verb = [&](const char* name, const char* about) {
    CLI::App* v = history->add_subcommand(name, about);
    v->allow_extras(false);
    const auto& help = kHistoryVerbHelp.at(name);
    own_help(*v, help[0], help[1], help[2]);
    v->add_option("--history", h.target.file, std::string("the store (default ") + kDefaultHistory + ")");
    v->final_callback([&h, name] { h.verb = name; });
    return v;
  };
  CLI::App* add = verb("add", "add the runs of reports (of run, compare, bisect, sweep or merge) to the store");
  add->add_option("reports", o_.inputs, "the reports")->required()->check(CLI::ExistingFile);
  add->add_option("--revision", h.target.revision, "the revision measured (default: each run's pin revision, else git HEAD "
                                            "of --cwd, else the harness's revision in the report)");
  add->add_option("--cwd", h.target.cwd, "the repository the revision is of");
  add->add_option("--machine", h.target.machine, "the machine's name (default the report's host)");
  CLI::App* merge = verb("merge", "add the runs of other stores to the first: harness history merge A B...");
  merge->add_option("stores", o_.inputs, "the store to add to, then the stores to add")->required()->expected(2, -1);
  for (CLI::App* v : {verb("show", "a series per revision: median and range, steps marked"),
                      verb("steps", "the steps of every series (exit 1: a regression among the last --last revisions)"),
                      verb("page", "write a static dashboard page into --out DIR"),
                      verb("ack", "acknowledge a step as intended, with a reason: it no longer fails steps")}) {
    v->add_option("--metric", h.metric, "the metric")->required(v->get_name() == "ack");
    v->add_option("--workload", h.workload, "the workload or program")->required(v->get_name() == "ack");
    v->add_option("--allocator", h.allocator, "the allocator (a pin without its revision: scav)")
        ->required(v->get_name() == "ack");
    v->add_option("--machine", h.target.machine, "the machine (default: every machine, each its own series)");
    if (v->get_name() == "ack") {
      v->add_option("--revision", h.target.revision, "the step's revision")->required();
      v->add_option("--reason", h.reason, "why the step is intended")->required();
      continue;
    }
    v->add_option("--min-segment", h.min_segment, "revisions on each side of a step")
        ->check(in_range(1, 1000, true))
        ->capture_default_str();
    v->add_option("--alpha", h.alpha, "significance level of each step's test")
        ->check(in_range(0.0001, 0.5))
        ->capture_default_str();
    v->add_option("--thresholds", o_.thresholds, "metric directions and thresholds (default ci/thresholds.json)");
    if (v->get_name() == "steps")
      v->add_option("--last", h.last, "exit 1 when a regression step is among the last N revisions of its series")
          ->check(in_range(0, 1000000, true));
    if (v->get_name() == "page") {
      v->add_option("--out", h.out, "the folder of the page")->required();
      v->add_option("--repo-url", h.repo_url,
                    "the repository's web address: each revision that is a commit links to URL/commit/SHA");
    }
  }
  return history;
}

ParseOutcome CommandLine::parse(int argc, char** argv) {
  // plot passes every argument on to its script, a kind first (rss, compare, ...),
  // which CLI11 would take for a command of the same name.
  if (argc > 1 && std::string_view(argv[1]) == "plot") {
    o_.command = Command::Plot;
    o_.inputs.assign(argv + 2, argv + argc);
    return {o_, 0};
  }
  if (auto e = unknown_command(argc, argv); !e.empty()) {
    std::cerr << "harness: " << e << "\n";
    return {std::nullopt, 2};
  }
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::cout << chosen_help();
    return {std::nullopt, 0};
  } catch (const CLI::ParseError& e) {
    std::cerr << "harness: " << e.what() << suggestion(argc, argv) << "\n";
    return {std::nullopt, 2};
  }
  return chosen();
}

// A first word that is no command (`harness comapre ...`; a run starts with an
// option), or a group's missing or unknown verb (`harness history site`): named,
// with the nearest choice and all of them.
std::string CommandLine::unknown_command(int argc, char** argv) const {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string word = argv[1];
  const auto commands = subcommand_names(app_);
  if (std::find(commands.begin(), commands.end(), word) == commands.end())
    return fmt::format("'{}' is not a command{}; the commands are {} (harness --help)", word,
                       did_you_mean(word, commands), fmt::join(commands, ", "));
  const CLI::App* group = app_.get_subcommand(word);
  if (group->get_require_subcommand_min() == 0) return "";
  const auto verbs = subcommand_names(*group);
  const std::string verb = argc > 2 ? argv[2] : "";
  if (verb == "-h" || verb == "--help") return "";
  if (verb.empty() || verb[0] == '-')
    return fmt::format("{} needs one of {} (harness {} VERB --help)", word, fmt::join(verbs, ", "), word);
  if (std::find(verbs.begin(), verbs.end(), verb) == verbs.end())
    return fmt::format("'{}' is not a verb of {}{}; the verbs are {}", verb, word, did_you_mean(verb, verbs),
                       fmt::join(verbs, ", "));
  return "";
}

// "; --outt is not an option of harness merge (did you mean --out?)" for the first
// unknown option of a subcommand that takes no workload parameters (where an
// unknown option is the user's typo, whatever error CLI11 reported first).
std::string CommandLine::suggestion(int argc, char** argv) const {
  const CLI::App* app = &app_;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : app->get_subcommands({}))
      if (sub->parsed()) {
        app = sub;
        deeper = true;
        break;
      }
  }
  if (app->get_allow_extras()) return "";
  auto names = option_names(*app);
  names.push_back("--help");
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-' || arg == "--") continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    return fmt::format("; {} is not an option of {}{}", name, app == &app_ ? "harness" : "harness " + app->get_name(),
                       did_you_mean(name, names));
  }
  return "";
}

// --help: the help of the subcommand it was given to (plot shows its scripts' own).
std::string CommandLine::chosen_help() const {
  for (const CLI::App* sub : {compare_, merge_, bisect_, sweep_, squeeze_, export_, show_, table_, page_})
    if (app_.got_subcommand(sub)) return sub->help();
  if (app_.got_subcommand(history_)) {
    for (const CLI::App* verb : history_->get_subcommands())
      if (verb->parsed()) return verb->help();
    return history_->help();
  }
  return app_.help();
}

ParseOutcome CommandLine::chosen() {
  if (app_.got_subcommand(bisect_)) {
    take_rounds(bisect_runs_);
    return workloads_chosen(*bisect_, Command::Bisect, o_.runs);
  }
  if (app_.got_subcommand(sweep_)) return workloads_chosen(*sweep_, Command::Sweep, sweep_runs_);
  if (app_.got_subcommand(squeeze_)) {
    o_.command = Command::Squeeze;
    o_.runs = squeeze_rounds_;
    take_workload_args(squeeze_->remaining());
    if (o_.workload.empty() && o_.suite.empty() && o_.program.empty()) {
      std::cerr << "harness squeeze: no workload given: use --workload NAME, --suite NAME or -- PROGRAM [ARGS...]\n";
      return {std::nullopt, 2};
    }
    return {o_, 0};
  }
  if (app_.got_subcommand(merge_)) {
    o_.command = Command::Merge;
    return {o_, 0};
  }
  if (app_.got_subcommand(export_)) {
    o_.command = Command::Export;
    return {o_, 0};
  }
  if (app_.got_subcommand(show_)) {
    o_.command = Command::Show;
    return {o_, 0};
  }
  if (app_.got_subcommand(table_)) {
    o_.command = Command::Table;
    return {o_, 0};
  }
  if (app_.got_subcommand(page_)) {
    o_.command = Command::Page;
    return {o_, 0};
  }
  if (app_.got_subcommand(compare_)) return compare_chosen();
  if (app_.got_subcommand(history_)) {
    o_.command = Command::History;
    if (o_.history.target.file.empty()) o_.history.target.file = kDefaultHistory;
    return {o_, 0};
  }
  return run_chosen();
}

void CommandLine::take_workload_args(std::vector<std::string> extras) {
  o_.workload_args = std::move(extras);
  if (o_.smoke) o_.workload_args.insert(o_.workload_args.begin(), "--smoke");
}

// bisect and sweep: a workload or a suite, never a program.
ParseOutcome CommandLine::workloads_chosen(CLI::App& sub, Command command, int runs) {
  o_.command = command;
  o_.runs = runs;
  take_workload_args(sub.remaining());
  if (o_.workload.empty() && o_.suite.empty()) {
    std::cerr << "harness " << sub.get_name() << ": no workload given: use --workload NAME or --suite NAME\n";
    return {std::nullopt, 2};
  }
  return {o_, 0};
}

void CommandLine::take_rounds(const std::string& runs) {
  o_.runs_auto = runs == "auto";
  o_.runs = o_.runs_auto ? kMinRounds : std::stoi(runs);  // checked by rounds_or_auto
}

ParseOutcome CommandLine::compare_chosen() {
  o_.command = Command::Compare;
  take_rounds(compare_runs_);
  const bool commands = !o_.baseline_command.empty() || !o_.candidate_command.empty();
  if (commands && !both_allocator_.empty()) {
    o_.allocators = {both_allocator_};
  } else if (!both_allocator_.empty()) {
    if (!o_.baseline_allocator.empty() || !o_.candidate_allocator.empty()) {
      std::cerr << "harness compare: give --allocator (both reports) or --baseline-allocator and "
                   "--candidate-allocator, not both\n";
      return {std::nullopt, 2};
    }
    o_.baseline_allocator = o_.candidate_allocator = both_allocator_;
  }
  // Without a workload, suite, program or commands, the extras are the two reports to compare.
  if (o_.workload.empty() && o_.suite.empty() && o_.program.empty() && !commands) {
    o_.inputs = compare_->remaining();
    take_workload_args({});
  } else {
    take_workload_args(compare_->remaining());
  }
  return {o_, 0};
}

ParseOutcome CommandLine::run_chosen() {
  take_workload_args(app_.remaining());
  // --seed is the harness's and most workloads' own: with a workload it is the
  // workload's (one that has none says so), so that `-w flat-churn --seed 3`
  // runs seed 3 instead of the ledger's seed silently taking it.
  if (o_.seed && !o_.workload.empty()) {
    o_.workload_args.push_back("--seed");
    o_.workload_args.push_back(std::to_string(*o_.seed));
    o_.seed.reset();
  }
  o_.command = list_ ? Command::List : Command::Run;
  if (!list_ && o_.workload.empty() && o_.suite.empty() && o_.program.empty()) {
    std::cerr << "harness: no workload given: use --workload NAME, --suite NAME (see harness --list) or -- PROGRAM "
                 "[ARGS...]\n";
    return {std::nullopt, 2};
  }
  return {o_, 0};
}

// Labels the history keeps, made valid UTF-8 as they enter: the revision and
// the machine identify a series (escaped reversibly), a reason is only shown.
void history_labels_as_text(HistoryOptions& h) {
  h.target.revision = escape::identity(h.target.revision);
  h.target.machine = escape::identity(h.target.machine);
  h.reason = escape::shown(h.reason);
}

}  // namespace

ParseOutcome parse_options(int argc, char** argv) {
  Options o;
  o.argv.assign(argv, argv + argc);
  const int given = split_program(argc, argv, o);
  if (given < 0) {
    std::cerr << "harness: nothing after --: give the program to run, harness [OPTIONS] -- PROGRAM [ARGS...]\n";
    return {std::nullopt, 2};
  }
  CommandLine line(std::move(o));
  ParseOutcome parsed = line.parse(given, argv);
  if (parsed.options) history_labels_as_text(parsed.options->history);
  return parsed;
}

}  // namespace mh
