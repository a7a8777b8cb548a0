// The compare command: run two pins as baseline, candidate and baseline again
// (interleaved, order shuffled per round), or read two reports; then analyse,
// print the table, write the comparison JSON (and markdown), and exit 1 on a
// regression.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "commands/commands.h"
#include "compare/compare_report.h"
#include "report/context.h"
#include "core/curve.h"
#include "report/output_names.h"
#include "report/report_json.h"
#include "commands/session.h"

namespace mh {

namespace {

int bad_input(const std::string& message) {
  fmt::print(stderr, "harness compare: {}\n", message);
  return 2;
}

// The runs of a report as one side of a comparison: those of `allocator`, or of
// the report's only allocator when none is named.
bool take_side(const std::string& path, const char* role, const std::string& allocator, const char* option,
               std::vector<RunRecord>& out, DeclaredMetrics& declared, std::string& error) {
  auto report = read_report(path, error);
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

// The workloads' declared metrics (unit, which way is better): from the
// workloads installed here, else from the manifests of the reports read.
DeclaredMetrics declared_by_workloads(const Layout& l, const std::vector<RunRecord>& runs,
                                      const DeclaredMetrics& from_reports) {
  DeclaredMetrics out = from_reports;
  std::set<std::string> seen;
  for (const auto& r : runs)
    if (seen.insert(r.workload).second)
      if (auto w = find_workload(l.libexec, r.workload)) out[r.workload] = declared_metric_specs(*w);
  return out;
}

}  // namespace

int compare_command(const Options& o) {
  auto l = find_layout();
  std::string error;
  const std::string thresholds_path = o.thresholds.empty() ? l.share + "/thresholds.json" : o.thresholds;
  auto thresholds = load_thresholds(thresholds_path, error);
  if (!thresholds) return bad_input(error);

  // A default name is reserved with its runs report (when runs are made), so
  // that neither replaces an earlier comparison, and only once the input is
  // known to be good, so that bad input leaves nothing behind. An explicit
  // --out (and the -runs.json beside it) is replaced, as asked. Resuming
  // RUNS.json (a comparison's -runs.json) writes the comparison it would have
  // written: the same name without -runs.
  const bool runs_here = !o.workload.empty() || !o.suite.empty() || !o.program.empty();
  std::string out = o.out, runs_out = !o.resume.empty() ? o.resume : o.report;
  if (out.empty() && !o.resume.empty() && o.resume.ends_with("-runs.json"))
    out = o.resume.substr(0, o.resume.size() - 10) + ".json";
  if (!out.empty())
    if (auto e = check_writable(out); !e.empty()) return bad_input("--out: " + e);
  for (const auto& [path, option] : {std::pair{o.export_markdown, "--export-markdown"}, std::pair{o.export_csv, "--export-csv"}})
    if (auto err = check_export(path, option); !err.empty()) return bad_input(err);
  auto reserve_outputs = [&] {
    if (!out.empty()) return true;
    std::vector<std::string> suffixes = {".json"};
    if (runs_here && runs_out.empty()) suffixes.push_back("-runs.json");
    auto reserved = reserve_new_outputs("results/compare", suffixes, error);
    if (reserved.empty()) return false;
    out = reserved[0];
    if (reserved.size() > 1) runs_out = reserved[1];
    return true;
  };
  ExecutionOutcome outcome;
  outcome.complete = true;  // reports read back are taken as they are
  size_t planned = 0;
  std::string runs_path;

  std::vector<RunRecord> runs;
  DeclaredMetrics from_reports;  // the workloads' metrics as the reports read back declare them
  std::vector<Job> jobs;
  Json context = make_context(o.argv);
  if ((o.workload.empty() && o.suite.empty() && o.program.empty()) && o.inputs.size() == 1) {
    // The runs report of an earlier comparison (or the merged shards of one):
    // its runs carry their roles.
    auto report = read_report(o.inputs[0], error);
    if (!report) return bad_input(error);
    from_reports = declared_from_manifest(report->manifest, report->runs);
    for (auto& r : report->runs) {
      if (r.role != kRoleBaseline && r.role != kRoleCandidate && r.role != kRoleBaselineAgain)
        return bad_input(o.inputs[0] + " has runs without a comparison role; to compare two plain reports give both: "
                                       "harness compare OLD.json NEW.json");
      runs.push_back(std::move(r));
    }
    context["inputs"] = o.inputs;
  } else if (o.workload.empty() && o.suite.empty() && o.program.empty()) {
    if (o.inputs.size() != 2)
      return bad_input("give --baseline and --candidate with --workload or --suite, two reports "
                       "(harness compare OLD.json NEW.json), or the runs report of a comparison");
    if (!take_side(o.inputs[0], kRoleBaseline, o.baseline_allocator, "--baseline-allocator", runs, from_reports,
                   error) ||
        !take_side(o.inputs[1], kRoleCandidate, o.candidate_allocator, "--candidate-allocator", runs, from_reports,
                   error))
      return bad_input(error);
    // Both sides must have run the same workloads with the same parameters.
    std::map<std::string, std::set<std::string>> sides;
    for (const auto& r : runs) sides[r.role].insert(r.workload + " " + r.params.dump());
    if (sides[kRoleBaseline] != sides[kRoleCandidate])
      return bad_input(o.inputs[0] + " and " + o.inputs[1] + " are runs of different workloads or parameters (" +
                       *sides[kRoleBaseline].begin() + " against " + *sides[kRoleCandidate].begin() +
                       "); compare takes two reports of the same plan");
    // Without a second baseline, the baseline's even repetitions stand in for it.
    for (auto& r : runs)
      if (r.role == kRoleBaseline && r.repetition % 2 == 0) r.role = kRoleBaselineAgain;
    context["inputs"] = o.inputs;
  } else {
    if (o.baseline.empty() || o.candidate.empty()) return bad_input("--baseline and --candidate are both required");
    if (!o.baseline_allocator.empty() || !o.candidate_allocator.empty())
      return bad_input("--allocator, --baseline-allocator and --candidate-allocator choose runs from two reports; "
                       "with --workload or --suite the pins are --baseline and --candidate");
    auto found = o.program.empty() ? resolve_jobs(l, o.workload, o.workload_args, o.suite, o.shard, error)
                                   : program_jobs(o, error);
    if (!found) return bad_input(error);
    jobs = *found;
    auto base = resolve_allocator(l, o.baseline, error);
    if (!base) return bad_input(error);
    auto cand = resolve_allocator(l, o.candidate, error);
    if (!cand) return bad_input(error);
    Execution e;
    e.jobs = jobs;
    e.arms = {{*base, kRoleBaseline}, {*cand, kRoleCandidate}, {*base, kRoleBaselineAgain}};
    if (!apply_run_options(o, e, error)) return bad_input(error);
    if (!reserve_outputs()) return bad_input(error);
    // Resuming: the seed of the report's plan, unless one is given (which must then agree).
    std::optional<uint64_t> seed = o.seed;
    std::optional<ReportData> earlier;
    if (!o.resume.empty()) {
      earlier = read_report(o.resume, error);
      if (!earlier) return bad_input(error);
      const Json plan = earlier->context.value("plan", Json());
      if (!seed && plan.contains("shuffle_seed") && plan["shuffle_seed"].is_number_unsigned())
        seed = plan["shuffle_seed"].get<uint64_t>();
    }
    if (!seed) seed = std::random_device{}();
    e.plan = interleave(e.jobs.size(), e.arms.size(), o.runs, *seed);
    runs_path = runs_out.empty() ? out.substr(0, out.size() - (out.size() > 5 && out.ends_with(".json") ? 5 : 0)) + "-runs.json"
                                 : runs_out;
    e.out = runs_path;
    if (auto err = check_writable(e.out); !err.empty()) return bad_input("--report: " + err);
    e.context = context;
    e.context["plan"] = plan_json(e, Json{{"rounds", o.runs}, {"shuffle_seed", *seed}, {"suite", o.suite},
                                          {"shard", o.shard}, {"baseline", o.baseline}, {"candidate", o.candidate},
                                          {"sample_ms", o.run.sample_ms}, {"memory_limit", e.run.memory_limit}});
    if (!o.resume.empty()) {
      auto kept = runs_to_resume(o.resume, std::move(earlier), e.context["plan"], error);
      if (!kept) return bad_input(error);
      e.kept = std::move(*kept);
    }
    outcome = execute(e, runs);
    if (!outcome.error.empty()) {
      fmt::print(stderr, "harness compare: {}\n", outcome.error);
      if (!outcome.rescue.empty())
        fmt::print(stderr, "harness compare: the {} runs done are in {}\n", runs.size(), outcome.rescue);
      return 1;
    }
    context = e.context;
    context["runs_report"] = e.out;
    planned = e.plan.size();
  }

  if (!runs_here && !reserve_outputs()) return bad_input(error);
  CompareSettings settings;
  settings.alpha = o.alpha;
  // Reports read back: --after measures their curves from another mark.
  if (!runs_here && !o.run.after_mark.empty())
    for (auto& r : runs) compute_curve(r, o.run.after_mark, "");
  // The jobs run here declare their metrics under their names (a suite entry may rename its workload).
  for (const auto& job : jobs) from_reports[job.workload.name] = declared_metric_specs(job.workload);
  Comparison c = analyze(runs, *thresholds, settings, declared_by_workloads(l, runs, from_reports));
  if (c.baseline.empty()) c.baseline = o.baseline;
  if (c.candidate.empty()) c.candidate = o.candidate;
  context["thresholds"] = thresholds_path;
  Json comparison = comparison_to_json(c, context);
  comparison["complete"] = outcome.complete;
  if (auto e = write_atomic(out, dump_canonical(comparison)); !e.empty()) {
    fmt::print(stderr, "harness compare: {}\n", e);
    return 1;
  }
  fmt::print("{}comparison: {}\n", comparison_table(c), out);
  for (const auto& [path, text] : {std::pair{o.export_markdown, comparison_markdown(c)}, std::pair{o.export_csv, comparison_csv(c)}})
    if (auto err = write_export(path, text); !err.empty()) {
      fmt::print(stderr, "harness compare: {}\n", err);
      return 1;
    }
  if (outcome.stop_signal) {
    fmt::print(stderr,
               "harness compare: stopped by a signal after {} of {} runs: the comparison covers those only; to "
               "finish, run the same command with --resume {}\n",
               runs.size(), planned, runs_path);
    return 128 + outcome.stop_signal;
  }
  return c.regressed() || c.failed_runs > 0 ? 1 : 0;
}

}  // namespace mh
