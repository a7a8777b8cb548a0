// The compare command: run two pins (or two commands under one allocator) as
// baseline, candidate and baseline again (interleaved, order shuffled per
// round), or read two reports, or the runs report of a comparison; then
// analyse, print the table, write the comparison JSON (and markdown), and
// exit 1 on a regression of a gated metric, 4 when incomplete.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "commands/commands.h"
#include "commands/execute.h"
#include "commands/exports.h"
#include "commands/pages.h"
#include "commands/from_options.h"
#include "commands/looks.h"
#include "commands/resolve.h"
#include "compare/compare_report.h"
#include "compare/heap_site_diff.h"
#include "compare/sequential.h"
#include "core/curve.h"
#include "report/context.h"
#include "report/output_names.h"
#include "report/report_read.h"
#include "sys/output_file.h"

namespace mh {

namespace {

constexpr const char* kWhoCompare = "harness compare";

// Where the comparison goes and, when runs are made here, the runs report. A
// default name is reserved with its runs report (when runs are made), so that
// neither replaces an earlier comparison, and only once the input is known to
// be good, so that bad input leaves nothing behind. An explicit --out (and the
// -runs.json beside it) is replaced, as asked.
struct Outputs {
  std::string out;       // the comparison JSON; "" until reserved
  std::string runs_out;  // the runs report; "" for the comparison's name with -runs.json
};

// The outputs the options name, checked. Resuming RUNS.json (a comparison's
// -runs.json) writes the comparison it would have written: the same name
// without -runs.
std::optional<Outputs> outputs_asked(const Options& o, std::string& error) {
  Outputs outputs{o.out, !o.resume.empty() ? resumed_report(o.resume, error) : o.report};
  if (!o.resume.empty() && outputs.runs_out.empty()) return std::nullopt;
  if (outputs.out.empty() && !o.resume.empty() && outputs.runs_out.ends_with("-runs.json"))
    outputs.out = outputs.runs_out.substr(0, outputs.runs_out.size() - 10) + ".json";
  if (!outputs.out.empty())
    if (auto e = output_file::check_target(outputs.out); !e.empty()) {
      error = "--out: " + e;
      return std::nullopt;
    }
  error = check_exports(o);
  if (!error.empty()) return std::nullopt;
  return outputs;
}

// A comparison on standard output has its runs report under a new name too.
bool reserve_outputs(Outputs& outputs, bool runs_here, std::string& error) {
  const bool name_out = outputs.out.empty();
  const bool name_runs =
      runs_here && outputs.runs_out.empty() && (name_out || outputs.out == output_file::kStdout);
  if (!name_out && !name_runs) return true;
  std::vector<std::string> suffixes;
  if (name_out) suffixes.push_back(".json");
  if (name_runs) suffixes.push_back("-runs.json");
  auto reserved = reserve_new_outputs("results/compare", suffixes, error);
  if (reserved.empty()) return false;
  if (name_out) outputs.out = reserved.front();
  if (name_runs) outputs.runs_out = reserved.back();
  return true;
}

// The runs a comparison analyses, however they were gathered.
struct Gathered {
  std::vector<RunRecord> runs;
  DeclaredMetrics declared;  // the workloads' metrics as the reports read or the jobs run here declare them
  // The metrics that gate by default, as the jobs run here (or, read back, the
  // comparison that made the runs report) declared them; a workload not here
  // has the installed workload's set (gated_by_workloads).
  GatedMetrics gated;
  Json context;              // the comparison's
  // Of the runs made here; reports read back are taken as they are: complete.
  ExecutionOutcome outcome = [] {
    ExecutionOutcome read_back;
    read_back.complete = true;
    return read_back;
  }();
  size_t planned = 0;        // the runs planned here
  std::string runs_path;     // where the runs made here went
  // Two commands compared: the plan's {"baseline", "candidate", "allocator"}; null for pins.
  Json commands;
  // The runs were made in rounds (here, or in the comparison whose runs report
  // was read), so round k of each side ran together: two plain reports were not.
  bool in_rounds = true;
};

// Reports read back: --after measures their curves from another mark.
void measure_after(std::vector<RunRecord>& runs, const std::string& after_mark) {
  if (after_mark.empty()) return;
  for (auto& r : runs) compute_curve(r, after_mark, "");
}

// Reports read back keep their runs' sampled series only for --after, which
// measures the curves again: a long report then costs its figures, not its samples.
ReadSettings series_needed(const Options& o) { return ReadSettings{.series = !o.run.after_mark.empty()}; }

// The runs report of an earlier comparison (or the merged shards of one): its
// runs carry their roles.
std::optional<Gathered> read_runs_report(const Options& o, std::string& error) {
  auto report = read_report(o.inputs[0], error, series_needed(o));
  if (!report) return std::nullopt;
  Gathered g;
  g.declared = declared_from_manifest(report->manifest, report->runs);
  g.outcome.complete = report->complete;
  if (const Json gated = report->context.value("gated", Json()); gated.is_object())
    for (const auto& [w, metrics] : gated.items())
      for (const auto& m : metrics)
        if (m.is_string()) g.gated[w].push_back(m.get<std::string>());
  for (auto& r : report->runs) {
    if (r.role != kRoleBaseline && r.role != kRoleCandidate && r.role != kRoleBaselineAgain) {
      error = o.inputs[0] + " has runs without a comparison role; to compare two plain reports give both: "
                            "harness compare OLD.json NEW.json";
      return std::nullopt;
    }
    g.runs.push_back(std::move(r));
  }
  g.context = make_context(o.argv);
  g.context["inputs"] = o.inputs;
  g.commands = report->context.value("plan", Json::object()).value("commands", Json());
  measure_after(g.runs, o.run.after_mark);
  return g;
}

// The runs of a report as one side of a comparison: those of `allocator`, or of
// the report's only allocator when none is named.
bool take_side(const Options& o, const std::string& path, const char* role, const std::string& allocator, const char* option,
               std::vector<RunRecord>& out, DeclaredMetrics& declared, std::string& error) {
  auto report = read_report(path, error, series_needed(o));
  if (!report) return false;
  for (auto& [w, metrics] : declared_from_manifest(report->manifest, report->runs)) declared[w].merge(metrics);
  std::vector<std::string> names;
  for (const auto& r : report->runs)
    if (std::find(names.begin(), names.end(), r.allocator.name) == names.end()) names.push_back(r.allocator.name);
  std::string listed;
  for (const auto& n : names) listed += (listed.empty() ? "" : ", ") + n;
  if (names.empty()) {
    error = path + " has no runs";
    return false;
  }
  if (allocator.empty() && names.size() > 1) {
    error = path + " holds runs of several allocators (" + listed + "); choose one with --allocator NAME (the same " +
            "in both reports) or " + option + " NAME";
    return false;
  }
  if (!allocator.empty() && std::find(names.begin(), names.end(), allocator) == names.end()) {
    error = path + " has no runs of allocator '" + allocator + "'; it has: " + listed;
    return false;
  }
  const std::string pin = allocator.empty() ? names.front() : allocator;
  for (auto& r : report->runs) {
    if (r.allocator.name != pin) continue;
    r.role = role;
    out.push_back(std::move(r));
  }
  return true;
}

// What must be the same on both sides of two reports: the workload with its
// parameters; for a program, its name and settings but not its command, so that
// two builds of one program (./old/app and ./new/app, both "app") compare, as
// --baseline-command and --candidate-command compare them live.
std::string plan_key(const RunRecord& r) {
  Json params = r.params;
  if (params.is_object() && params.contains("command")) {
    params.erase("command");
    params.erase("path");
  }
  return r.workload + " " + json_text(params);
}

// Two plain reports: OLD's runs the baseline, NEW's the candidate.
std::optional<Gathered> read_two_reports(const Options& o, std::string& error) {
  if (o.inputs.size() != 2) {
    error = "give --baseline and --candidate with --workload or --suite, two reports "
            "(harness compare OLD.json NEW.json), or the runs report of a comparison";
    return std::nullopt;
  }
  Gathered g;
  if (!take_side(o, o.inputs[0], kRoleBaseline, o.baseline_allocator, "--baseline-allocator", g.runs, g.declared,
                 error) ||
      !take_side(o, o.inputs[1], kRoleCandidate, o.candidate_allocator, "--candidate-allocator", g.runs, g.declared,
                 error))
    return std::nullopt;
  // Both sides must have run the same workloads with the same parameters.
  std::map<std::string, std::set<std::string>> sides;
  for (const auto& r : g.runs) sides[r.role].insert(plan_key(r));
  if (sides[kRoleBaseline] != sides[kRoleCandidate]) {
    error = o.inputs[0] + " and " + o.inputs[1] + " are runs of different workloads or parameters (" +
            *sides[kRoleBaseline].begin() + " against " + *sides[kRoleCandidate].begin() +
            "); compare takes two reports of the same plan";
    return std::nullopt;
  }
  // Without a second baseline, the baseline's even repetitions stand in for it.
  g.in_rounds = false;
  for (auto& r : g.runs)
    if (r.role == kRoleBaseline && r.repetition % 2 == 0) r.role = kRoleBaselineAgain;
  g.context = make_context(o.argv);
  g.context["inputs"] = o.inputs;
  measure_after(g.runs, o.run.after_mark);
  return g;
}

// The jobs under the two pins as baseline, candidate and baseline again, with
// the run settings; the plan is made once the outputs are known.
std::optional<Execution> pins_execution(const Options& o, const Layout& l, std::string& error) {
  if (o.baseline.empty() || o.candidate.empty()) {
    error = "--baseline and --candidate are both required";
    return std::nullopt;
  }
  if (!o.baseline_allocator.empty() || !o.candidate_allocator.empty()) {
    error = "--allocator, --baseline-allocator and --candidate-allocator choose runs from two reports; "
            "with --workload or --suite the pins are --baseline and --candidate";
    return std::nullopt;
  }
  auto jobs = jobs_from_options(l, o, error);
  if (!jobs) return std::nullopt;
  auto base = resolve_allocator(l, o.baseline, error);
  if (!base) return std::nullopt;
  auto cand = resolve_allocator(l, o.candidate, error);
  if (!cand) return std::nullopt;
  Execution e;
  e.jobs = *jobs;
  e.arms = {{*base, kRoleBaseline}, {*cand, kRoleCandidate}, {*base, kRoleBaselineAgain}};
  if (!apply_run_options(o, e, error)) return std::nullopt;
  return e;
}

bool compares_commands(const Options& o) { return !o.baseline_command.empty() || !o.candidate_command.empty(); }

// What a comparison of two commands cannot take, or "".
std::string commands_misused(const Options& o) {
  const char* valid = "; valid: harness compare [-a PIN] --baseline-command 'A ARGS' --candidate-command 'B ARGS' "
                      "[OPTIONS]";
  if (o.baseline_command.empty() || o.candidate_command.empty())
    return std::string(o.baseline_command.empty() ? "--candidate-command without --baseline-command"
                                                  : "--baseline-command without --candidate-command") +
           ": two programs are compared, give both" + valid;
  if (!o.baseline.empty() || !o.candidate.empty())
    return std::string("--baseline-command and --candidate-command compare two programs under one allocator (-a PIN, "
                       "default glibc), --baseline and --candidate two pins: give one pair, not both") + valid;
  if (!o.workload.empty() || !o.suite.empty() || !o.program.empty())
    return std::string("--baseline-command and --candidate-command are the programs that run: no --workload, "
                       "--suite or -- PROGRAM with them") + valid;
  if (!o.baseline_allocator.empty() || !o.candidate_allocator.empty())
    return std::string("--baseline-allocator and --candidate-allocator choose runs from two reports; two commands "
                       "run under one allocator, -a PIN") + valid;
  if (!o.shard.empty()) return std::string("--shard cuts a suite; two commands are one job") + valid;
  if (!o.workload_args.empty())
    return "unexpected argument " + o.workload_args.front() +
           ": a command's own arguments go inside its quotes, --baseline-command 'A ARGS'";
  return "";
}

// Two commands under one allocator as baseline, candidate and baseline again:
// one job, both sides' name, and arms that run their own program.
std::optional<Execution> commands_execution(const Options& o, const Layout& l, std::string& error) {
  error = commands_misused(o);
  if (!error.empty()) return std::nullopt;
  auto sides = command_sides_from_options(o, error);
  if (!sides) return std::nullopt;
  auto spec = resolve_allocator(l, o.allocators.empty() ? "glibc" : o.allocators.front(), error);
  if (!spec) return std::nullopt;
  Execution e;
  e.jobs = {program_job(sides->baseline)};
  e.arms = {{*spec, kRoleBaseline, sides->baseline},
            {*spec, kRoleCandidate, sides->candidate},
            {*spec, kRoleBaselineAgain, sides->baseline}};
  if (!apply_run_options(o, e, error)) return std::nullopt;
  return e;
}

// The seed of the order shuffle: --seed, else (resuming) the seed of the
// report's plan, else drawn. Resuming, a given seed must agree with the
// report's: runs_to_resume compares the plans.
uint64_t shuffle_seed(const Options& o, const std::optional<ReportData>& earlier) {
  std::optional<uint64_t> seed = o.seed;
  if (earlier) {
    const Json plan = earlier->context.value("plan", Json());
    if (!seed && plan.contains("shuffle_seed") && plan["shuffle_seed"].is_number_unsigned())
      seed = plan["shuffle_seed"].get<uint64_t>();
  }
  return seed ? *seed : std::random_device{}();
}

// The comparison's name with -runs.json, unless --report names the runs report.
std::string runs_report_path(const Outputs& outputs) {
  const std::string& out = outputs.out;
  if (!outputs.runs_out.empty()) return outputs.runs_out;
  return out.substr(0, out.size() - (out.size() > 5 && out.ends_with(".json") ? 5 : 0)) + "-runs.json";
}

// Runs the two pins now, the runs report rewritten after every run (or
// finishes the one --resume names).
std::optional<Gathered> run_pins(const Options& o, const Layout& l, const Thresholds& t, Outputs& outputs,
                                 std::string& error) {
  auto e = compares_commands(o) ? commands_execution(o, l, error) : pins_execution(o, l, error);
  if (!e) return std::nullopt;
  if (!reserve_outputs(outputs, true, error)) return std::nullopt;
  std::optional<ReportData> earlier;
  if (!o.resume.empty()) {
    earlier = read_report(o.resume, error);
    if (!earlier) return std::nullopt;
  }
  const uint64_t seed = shuffle_seed(o, earlier);
  const std::vector<PlannedRun> full =
      interleave(e->jobs.size(), e->arms.size(), o.runs_auto ? o.max_runs : o.runs, seed);
  e->plan = o.runs_auto ? rounds_up_to(full, o.runs) : full;
  // A comparison's shard holds whole rounds of an entry: each round's sides on one machine.
  std::optional<BalancedPlan> balanced;
  if (o.runs_auto && !o.shard_durations.empty()) {
    error = "--shard-durations needs a fixed --runs N: rounds added look by look cannot be planned beforehand";
    return std::nullopt;
  }
  if (!balance_from_options(o, *e, true, balanced, error)) return std::nullopt;
  e->out = runs_report_path(outputs);
  if (auto err = output_file::check_target(e->out); !err.empty()) {
    error = "--report: " + err;
    return std::nullopt;
  }
  e->context = make_context(o.argv);
  if (!o.shard_engine.is_null()) e->context["shard_engine"] = o.shard_engine;
  e->context["gated"] = gated_by_jobs(e->jobs);
  e->context["plan"] = plan_json(*e, Json{{"rounds", o.runs_auto ? Json("auto") : Json(o.runs)},
                                          {"max_runs", o.runs_auto ? Json(o.max_runs) : Json(nullptr)},
                                          {"shuffle_seed", seed}, {"suite", o.suite},
                                          {"shard", o.shard}, {"baseline", o.baseline}, {"candidate", o.candidate},
                                          {"sample_ms", o.run.sample_ms}, {"memory_limit", e->run.memory_limit}, {"memory_high", e->run.memory_high}});
  if (balanced) e->context["plan"]["shard_by"] = "duration";
  if (compares_commands(o))
    e->context["plan"]["commands"] = Json{{"baseline", o.baseline_command}, {"candidate", o.candidate_command},
                                          {"allocator", e->arms.front().allocator.label}};
  if (!o.resume.empty()) {
    auto kept = runs_to_resume(o.resume, std::move(earlier), e->context["plan"], error);
    if (!kept) return std::nullopt;
    e->kept = std::move(*kept);
  }
  Gathered g;
  g.outcome = execute(*e, g.runs);
  // The jobs run here declare their metrics under their names (a suite entry may rename its workload).
  g.declared = declared_by_jobs(e->jobs);
  g.gated = gated_by_jobs(e->jobs);
  if (o.runs_auto) run_looks({o.max_runs, o.alpha, o.quiet}, t, g.declared, *e, full, g.runs, g.outcome);
  g.context = e->context;
  g.context["runs_report"] = e->out;
  g.commands = e->context["plan"].value("commands", Json());
  g.planned = e->plan.size();
  g.runs_path = e->out;
  return g;
}

// The runs report could not be written: what was lost, and where the runs went.
int runs_report_lost(const Gathered& g) {
  fmt::print(stderr, "{}: {}\n", kWhoCompare, g.outcome.error);
  if (!g.outcome.rescue.empty())
    fmt::print(stderr, "{}: the {} runs done are in {}\n", kWhoCompare, g.runs.size(), g.outcome.rescue);
  return 1;
}

// The workloads' declared metrics (unit, which way is better): from the
// workloads installed here, else from the manifests of the reports read.
DeclaredMetrics declared_by_workloads(const Layout& l, const std::vector<RunRecord>& runs,
                                      const DeclaredMetrics& from_reports) {
  DeclaredMetrics out = from_reports;
  std::set<std::string> seen;
  for (const auto& r : runs)
    if (seen.insert(r.workload).second)
      if (auto w = find_workload(l.libexec, r.workload)) out[r.workload] = declared_by_jobs({Job{*w}})[w->name];
  return out;
}

// The gated sets of the workloads the runs have: as gathered, else the
// installed workload's declaration (else, in analyze, the default set).
GatedMetrics gated_by_workloads(const Layout& l, const std::vector<RunRecord>& runs, const GatedMetrics& gathered) {
  GatedMetrics out = gathered;
  for (const auto& r : runs)
    if (!out.contains(r.workload))
      if (auto w = find_workload(l.libexec, r.workload)) out[r.workload] = gated_metrics(*w);
  return out;
}

// Why a comparison whose runs did not all finish is incomplete ("" when they did).
std::string not_finished(const Gathered& g, const std::string& resume) {
  if (g.outcome.stop_signal)
    return fmt::format("stopped by a signal after {} of {} runs; to finish: --resume {}", g.runs.size(), g.planned,
                       resume);
  if (!g.outcome.complete) return "the runs report is of a comparison that did not finish; to finish: --resume it";
  return "";
}

// Analyses the runs, writes the comparison and its exports, prints the table,
// and says how it ended (exit_code, compare.h): 0 no gated regression, 1 a
// gated regression, 4 incomplete (a run failed), 128 + the signal that stopped it.
int analyse_and_write(const Options& o, const Layout& l, const Thresholds& thresholds,
                      const std::string& thresholds_path, const Gate& gate, Gathered& g, const std::string& out) {
  CompareSettings settings;
  settings.alpha = o.alpha;
  settings.paired_rounds = g.in_rounds;
  settings.gate = gate;
  settings.gated = gated_by_workloads(l, g.runs, g.gated);
  Comparison c = analyze(g.runs, thresholds, settings, declared_by_workloads(l, g.runs, g.declared));
  if (c.baseline.empty()) c.baseline = o.baseline;
  if (c.candidate.empty()) c.candidate = o.candidate;
  if (g.commands.is_object()) {  // both sides ran under one allocator: they are named by their commands
    c.baseline = g.commands.value("baseline", "");
    c.candidate = g.commands.value("candidate", "");
    c.allocator = g.commands.value("allocator", "");
  }
  if (o.runs_auto) compare::apply_sequential(c, g.runs, compare::looks_up_to(o.max_runs), o.alpha);
  if (const std::string why = not_finished(g, g.runs_path); !why.empty())
    c.incomplete = c.incomplete.empty() ? why : why + "; " + c.incomplete;
  g.context["thresholds"] = thresholds_path;
  Json comparison = comparison_to_json(c, g.context);
  const auto site_changes = heap_site_changes(g.runs);
  if (!site_changes.empty()) comparison["heap_sites"] = heap_site_changes_json(site_changes);
  if (auto e = output_file::write_atomic(out, dump_canonical(comparison)); !e.empty()) {
    fmt::print(stderr, "{}: {}\n", kWhoCompare, e);
    return 1;
  }
  fmt::print(table_stream({out, o.export_markdown, o.export_csv}), "{}{}comparison: {}\n", comparison_table(c),
             heap_site_changes_table(site_changes), out == output_file::kStdout ? "standard output" : out);
  for (const auto& [path, text] : {std::pair{o.export_markdown, comparison_markdown(c) + heap_site_changes_markdown(site_changes)}, std::pair{o.export_csv, comparison_csv(c)}})
    if (auto err = write_export(path, text); !err.empty()) {
      fmt::print(stderr, "{}: {}\n", kWhoCompare, err);
      return 1;
    }
  if (!o.page.empty()) {
    if (auto err = write_runs_page(o.page, out, g.runs, o.diff_k, comparison); !err.empty()) {
      fmt::print(stderr, "{}: the page: {}\n", kWhoCompare, err);
      return 1;
    }
  }
  if (g.outcome.stop_signal) {
    fmt::print(stderr,
               "{}: stopped by a signal after {} of {} runs: the comparison covers those only; to finish, run the "
               "same command with --resume {}\n",
               kWhoCompare, g.runs.size(), g.planned, g.runs_path);
    return 128 + g.outcome.stop_signal;
  }
  return exit_code(c);
}

}  // namespace

int compare_command(const Options& o) {
  auto l = find_layout();
  std::string error;
  if (auto e = refuse_run_only(o, false); !e.empty()) return bad_input(kWhoCompare, e);
  const std::string thresholds_path = thresholds_file(l, o);
  auto thresholds = load_thresholds(thresholds_path, error);
  if (!thresholds) return bad_input(kWhoCompare, error);
  auto outputs = outputs_asked(o, error);
  if (!outputs) return bad_input(kWhoCompare, error);
  const auto gate = parse_gate(o.gate, error);
  if (!gate) return bad_input(kWhoCompare, error);
  const bool runs_here = !o.workload.empty() || !o.suite.empty() || !o.program.empty() || compares_commands(o);
  auto gathered = runs_here               ? run_pins(o, l, *thresholds, *outputs, error)
                  : o.inputs.size() == 1 ? read_runs_report(o, error)
                                         : read_two_reports(o, error);
  if (!gathered) return bad_input(kWhoCompare, error);
  if (!gathered->outcome.error.empty()) return runs_report_lost(*gathered);
  if (!runs_here && !reserve_outputs(*outputs, false, error)) return bad_input(kWhoCompare, error);
  return analyse_and_write(o, l, *thresholds, thresholds_path, *gate, *gathered, outputs->out);
}

}  // namespace mh
