// The run and list commands: validate everything, then run each allocator
// --runs times, interleaved, rewriting the report after every run, and print
// the summary table (also of what was done when interrupted).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "commands/commands.h"
#include "commands/execute.h"
#include "commands/exports.h"
#include "commands/from_options.h"
#include "commands/resolve.h"
#include "report/summary_exports.h"
#include "report/heap_sites_table.h"
#include "report/summary_table.h"
#include "report/context.h"
#include "core/soak.h"
#include "report/output_names.h"
#include "report/report_read.h"
#include "sys/output_file.h"

namespace mh {

namespace {

constexpr const char* kWhoRun = "harness";

HeadlinesByWorkload headlines_of(const std::vector<Job>& jobs) {
  HeadlinesByWorkload out;
  for (const auto& job : jobs) out[job.workload.name] = headline_metrics(job.workload);
  return out;
}

// Runs the plan, prints the table of what was done, and says how it ended:
// the exit code (128 + the signal when the harness was asked to stop).
int finish_execution(const Execution& e, const Options& o, const char* who) {
  std::vector<RunRecord> runs;
  auto outcome = execute(e, runs);
  if (e.verbose)
    fmt::print(stderr, "{}: writing the report took {:.1f} ms in all ({} runs, {} bytes at the end)\n", who,
               outcome.write_ms, runs.size(), outcome.report_bytes);
  const HeadlinesByWorkload headlines = headlines_of(e.jobs);
  std::FILE* table = table_stream({e.out, o.export_markdown, o.export_csv});
  fmt::print(table, "{}{}{}", summary_table(runs, headlines, o.table), heap_sites_table(runs), soak_note(runs));
  const DeclaredMetrics declared = declared_by_jobs(e.jobs);
  for (const auto& [path, text] : {std::pair{o.export_markdown, summary_markdown(runs, headlines, o.table.reference)},
                                   std::pair{o.export_csv, summary_csv(runs, declared)}})
    if (auto err = write_export(path, text); !err.empty()) fmt::print(stderr, "{}: {}\n", who, err);
  if (!outcome.error.empty()) {
    fmt::print(stderr, "{}: {}\n", who, outcome.error);
    if (!outcome.rescue.empty()) fmt::print(stderr, "{}: the {} runs done are in {}\n", who, runs.size(), outcome.rescue);
    return 1;
  }
  fmt::print(table, "report: {}{}\n", e.out == output_file::kStdout ? "standard output" : e.out,
             outcome.complete ? "" : " (incomplete)");
  if (outcome.runs_kept) fmt::print(table, "{} runs kept from the report, {} run now\n", outcome.runs_kept, runs.size() - outcome.runs_kept);
  if (outcome.stop_signal) {
    fmt::print(stderr, "{}: stopped by {} after {} of {} runs; to finish, run the same command with --resume {}\n", who,
               sigabbrev_np(outcome.stop_signal) ? std::string("SIG") + sigabbrev_np(outcome.stop_signal) : "a signal",
               runs.size(), e.plan.size(), e.out);
    return 128 + outcome.stop_signal;
  }
  for (const auto& r : runs)
    if (r.status != Status::Ok) return 1;
  return 0;
}

// Each allocator --allocator names once, or every available built-in (those
// not built here skipped, with a word).
std::optional<std::vector<Arm>> run_arms(const Options& o, const Layout& l, std::string& error) {
  std::vector<Arm> arms;
  if (o.allocators.empty()) {
    std::vector<std::string> missing;
    for (auto& a : available_builtins(default_allocator_context(l.libdir), &missing)) arms.push_back({a, ""});
    for (const auto& m : missing) fmt::print(stderr, "{}: skipping {}\n", kWhoRun, m);
  }
  std::set<std::string> labels;
  for (const auto& text : o.allocators) {
    auto spec = resolve_allocator(l, text, error);
    if (!spec) return std::nullopt;
    if (!labels.insert(spec->label).second) {
      error = "allocator '" + text + "' is given twice";
      return std::nullopt;
    }
    arms.push_back({*spec, ""});
  }
  return arms;
}

// --reference names one of the allocators run; "" when it does.
std::string reference_error(const Options& o, const std::vector<Arm>& arms) {
  std::vector<std::string> labels;
  for (const auto& a : arms) labels.push_back(a.allocator.label);
  if (o.table.reference.empty() || std::find(labels.begin(), labels.end(), o.table.reference) != labels.end()) return "";
  std::string valid;
  for (const auto& l : labels) valid += (valid.empty() ? "" : ", ") + l;
  return fmt::format("--reference {}: not an allocator of this run; the valid ones: {}", o.table.reference, valid);
}

}  // namespace

int list_command(const Options&) {
  auto l = find_layout();
  auto all = list_workloads(l.libexec);
  if (all.empty()) return bad_input(kWhoRun, "no workloads found in " + l.libexec);
  fmt::print("{}", format_list(all));
  return 0;
}

int run_command(const Options& o) {
  auto l = find_layout();
  std::string error;
  auto jobs = jobs_from_options(l, o, error);
  if (!jobs) return bad_input(kWhoRun, error);

  Execution e;
  e.jobs = *jobs;
  auto arms = run_arms(o, l, error);
  if (!arms) return bad_input(kWhoRun, error);
  e.arms = std::move(*arms);
  if (auto err = reference_error(o, e.arms); !err.empty()) return bad_input(kWhoRun, err);

  const std::string name = !o.suite.empty() ? "suite-" + o.suite : jobs->front().workload.name;
  if (!apply_run_options(o, e, error)) return bad_input(kWhoRun, error);
  if (auto err = check_exports(o); !err.empty()) return bad_input(kWhoRun, err);
  e.plan = interleave(e.jobs.size(), e.arms.size(), o.runs, std::nullopt);
  const Json not_run = leave_out_unsupported(e.jobs, e.arms, e.plan);
  std::optional<BalancedPlan> balanced;
  if (!balance_from_options(o, e, false, balanced, error)) return bad_input(kWhoRun, error);
  if (o.dry_run) {
    fmt::print("{}", plan_text(e, balanced, o.shard));
    return 0;
  }
  if (!o.out.empty() || !o.resume.empty()) {
    e.out = !o.out.empty() ? o.out : resumed_report(o.resume, error);
    if (e.out.empty()) return bad_input(kWhoRun, error);
    if (auto err = output_file::check_target(e.out); !err.empty()) return bad_input(kWhoRun, "--out: " + err);
  } else {
    auto reserved = reserve_new_outputs("results/" + name, {".json"}, error);
    if (reserved.empty()) return bad_input(kWhoRun, error);
    e.out = reserved[0];
  }
  for (const auto& n : not_run)
    fmt::print(stderr, "{}: {} is not run under {}: {}\n", kWhoRun, n["workload"].get<std::string>(),
               n["allocator"].get<std::string>(), n["why"].get<std::string>());
  e.context = make_context(o.argv);
  if (!o.shard_engine.is_null()) e.context["shard_engine"] = o.shard_engine;
  e.context["headlines"] = headlines_json(headlines_of(e.jobs));
  e.context["plan"] = plan_json(e, Json{{"rounds", o.runs}, {"suite", o.suite}, {"shard", o.shard},
                                        {"sample_ms", o.run.sample_ms}, {"memory_limit", e.run.memory_limit}, {"memory_high", e.run.memory_high},
                                        {"not_run", not_run}});
  if (balanced) e.context["plan"]["shard_by"] = "duration";
  if (!o.resume.empty()) {
    auto kept = runs_to_resume(o.resume, std::nullopt, e.context["plan"], error);
    if (!kept) return bad_input(kWhoRun, error);
    e.kept = std::move(*kept);
  }
  return finish_execution(e, o, kWhoRun);
}

}  // namespace mh
