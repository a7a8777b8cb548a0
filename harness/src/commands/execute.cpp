// Plan execution, each finished run journaled, the report written once at
// the end, and resume (see execute.h).
#include "commands/execute.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "commands/history_add.h"
#include "commands/resolve.h"
#include "core/escape.h"
#include "measure/program_run.h"
#include "measure/run_bounds.h"
#include "measure/runner.h"
#include "report/progress.h"
#include "report/journal.h"
#include "report/report_json.h"
#include "report/report_read.h"
#include "sys/interrupt.h"
#include "sys/output_file.h"

namespace mh {

namespace {

// Where the runs go when the report cannot be written any more: a new file
// among the system's temporary ones, under a name nobody could have planted
// there ahead (a shared /tmp).
std::string rescue(const std::string& out, const std::string& text) {
  const char* t = std::getenv("TMPDIR");
  const std::string dir = (t && *t) ? t : "/tmp";
  const std::string stem = std::filesystem::path(out).stem().string();
  std::string error;
  return output_file::write_new(dir, "memharness-rescued-" + stem + "-", ".json", text, error);
}

// Writes the report over `runs`, adding the cost to the outcome; when it
// cannot be written, the error, and the runs rescued elsewhere if they can be.
bool write_report(const Execution& e, const DeclaredMetrics& declared, const std::vector<RunRecord>& runs,
                  bool complete, ExecutionOutcome& outcome) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string text = report_text(e.context, runs, complete, declared);
  outcome.error = output_file::write_atomic(e.out, text);
  outcome.write_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  outcome.report_bytes = text.size();
  if (!outcome.error.empty() && e.out != output_file::kStdout) outcome.rescue = rescue(e.out, text);
  return outcome.error.empty();
}

// What the runner is asked for one planned run: the job under the arm's
// allocator with the execution's settings, its progress drawn on `progress`.
RunRequest run_request(const Execution& e, const Job& job, const Arm& arm, int repetition, Progress& progress) {
  RunRequest req;
  req.workload = job.workload.name;
  req.binary = job.workload.binary;
  req.args = job.args;
  req.params = job.params;
  req.allocator = arm.allocator;
  req.repetition = repetition;
  req.run = e.run;
  if (arm.memory_limit) req.run.memory_limit = arm.memory_limit;
  req.run.ledger_seed = round_seed(e.run.ledger_seed, repetition);
  // What each run keeps of its program's sends, so that the plan's report stays readable.
  req.run.bounds = bounds_for_plan(e.plan.size());
  req.pass_output = e.verbose;
  req.declared_metrics = declared_metrics(job.workload);
  // A program under --load idles after its load: its after.* figures count from there.
  req.declared_after = !job.program                  ? declared_after_mark(job.workload)
                       : job.program->load_argv.empty() ? ""
                                                        : "load-end";
  req.on_progress = [&progress](double ms, const std::string& mark) { progress.running(ms, mark); };
  if (job.program) req.program = &*job.program;
  if (e.run.ledger || job.ledger) req.ledger_library = ledger_library(find_layout());
  return req;
}

// The job a planned run runs: the plan's, or, for an arm with a program of
// its own (a command comparison), that program under the job's name.
Job job_of(const Execution& e, const PlannedRun& p) {
  const Arm& arm = e.arms[p.arm];
  if (!arm.program) return e.jobs[p.job];
  Job job = program_job(*arm.program);
  job.workload.name = e.jobs[p.job].workload.name;
  return job;
}

// --history: the runs join the store as the report has them; a store that
// cannot take them loses nothing, since the report holds them all.
void add_runs_to_history(const Execution& e, const std::vector<RunRecord>& runs) {
  if (e.history.file.empty() || runs.empty()) return;
  std::string error;
  if (auto added = add_to_history(e.history, ReportData{e.context, Json(), true, runs}, error))
    fmt::print(stderr, "harness: {} runs added to the history {}\n", *added, escape::terminal(e.history.file));
  else
    fmt::print(stderr, "harness: the runs were not added to the history: {}\n", escape::terminal_lines(error));
}

// Every planned run in turn (or its kept record), each journaled as it
// ends; stops when the harness is asked to or the journal cannot be written.
void run_plan(const Execution& e, Journal& journal, std::vector<RunRecord>& runs, ExecutionOutcome& outcome) {
  Progress progress(e.progress, e.plan.size());
  std::map<std::string, const RunRecord*> kept;
  for (const auto& r : e.kept) kept[run_key(r)] = &r;
  for (const auto& p : e.plan) {
    if ((outcome.stop_signal = interrupt::requested())) break;
    Job job = job_of(e, p);
    const Arm& arm = e.arms[p.arm];
    if (auto k = kept.find(run_key(job.workload.name, job.params, arm.allocator.label, arm.role, p.repetition));
        k != kept.end()) {
      runs.push_back(*k->second);
      ++outcome.runs_kept;
    } else {
      progress.starting(runs.size(), job.workload.name, arm.allocator.label, p.repetition);
      // ready_port auto: this run's own port (its params keep "auto" and {port}).
      const int port = job.program && job.program->ready_port_auto ? free_loopback_port() : 0;
      if (port) job.program = with_port(*job.program, port);
      runs.push_back(run_one(run_request(e, job, arm, p.repetition, progress)));
      if (port) runs.back().data["port"] = port;
      runs.back().role = arm.role;
      progress.finished(runs.back());
    }
    // Only the run just made can have been interrupted: the loop stops after it.
    outcome.complete = runs.size() == e.plan.size() && runs.back().status != Status::Interrupted;
    const auto t0 = std::chrono::steady_clock::now();
    if (journal.is_open()) outcome.error = journal.add(runs.back());
    outcome.write_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!outcome.error.empty()) break;
  }
  progress.clear();
}

}  // namespace

ExecutionOutcome execute(const Execution& e, std::vector<RunRecord>& runs) {
  ExecutionOutcome outcome;
  const DeclaredMetrics declared = declared_by_jobs(e.jobs);
  // Standard output takes the report at the end; there is no folder beside it for a journal.
  Journal journal;
  if (e.out != output_file::kStdout) {
    if (outcome.error = journal.open(e.out, e.context, declared); !outcome.error.empty()) return outcome;
    if (e.verbose || e.progress) fmt::print(stderr, "harness: the finished runs are journaled in {} until the report is written\n", journal.path());
    // A second Ctrl-C exits at once, before the report: the journal holds what is done.
    interrupt::set_exit_note(fmt::format("harness: stopped at once; the finished runs are in {} (--resume takes it)\n",
                                         journal.path()));
  }
  try {
    run_plan(e, journal, runs, outcome);
  } catch (...) {
    // A bug of the harness (main says so): what is finished still makes a
    // report. Should that fail too, the journal stays: it holds them.
    try {
      if (write_report(e, declared, runs, false, outcome)) journal.remove();
    } catch (...) {  // NOLINT(bugprone-empty-catch): the first error is the one main reports
    }
    interrupt::set_exit_note("");
    throw;
  }
  outcome.stop_signal = interrupt::requested();
  const std::string journal_error = outcome.error;
  if (!journal_error.empty()) outcome.complete = false;
  if (write_report(e, declared, runs, outcome.complete, outcome)) journal.remove();
  interrupt::set_exit_note("");
  // The report holds every run, but the plan stopped short.
  if (outcome.error.empty()) outcome.error = journal_error;
  add_runs_to_history(e, runs);
  return outcome;
}

std::string run_key(const std::string& workload, const Json& params, const std::string& allocator,
                    const std::string& role, int repetition) {
  return json_text(Json{workload, params, allocator, role, repetition});
}

std::string run_key(const RunRecord& r) {
  return run_key(r.workload, r.params, r.allocator.name, r.role, r.repetition);
}

Json plan_json(const Execution& e, const Json& extra) {
  Json jobs = Json::array();
  // As the runs' params keep them: the plan is what a resume checks.
  for (const auto& j : e.jobs) jobs.push_back(Json{{"workload", j.workload.name}, {"args", escape::identity(j.args)}});
  Json arms = Json::array();
  for (const auto& a : e.arms) {
    arms.push_back(Json{{"allocator", a.allocator.label}, {"role", a.role}});
    if (a.program) arms.back()["command"] = escape::identity(a.program->argv);
  }
  Json order = Json::array();
  for (const auto& p : e.plan) order.push_back(Json{p.job, p.arm, p.repetition});
  Json plan = extra;
  plan["jobs"] = jobs;
  plan["arms"] = arms;
  plan["order"] = order;
  if (!e.run.after_mark.empty()) plan["after"] = e.run.after_mark;
  if (e.run.soak_s > 0) plan["soak_s"] = e.run.soak_s;
  return plan;
}

std::string plan_difference(const Json& stored, const Json& asked) {
  if (!stored.is_object()) return "the report has no plan";
  for (const auto& [key, value] : asked.items()) {
    if (!stored.contains(key)) return "the report's plan has no " + key;
    if (stored[key] != value) {
      if (key == "order") return "the order of runs differs (another seed or number of runs)";
      return key + ": the report has " + json_text(stored[key]) + ", the command asks for " + json_text(value);
    }
  }
  return "";
}

std::optional<std::vector<RunRecord>> runs_to_resume(const std::string& path, std::optional<ReportData> report,
                                                     const Json& asked, std::string& error) {
  if (!report) report = read_report(path, error);
  if (!report) return std::nullopt;
  if (auto diff = plan_difference(report->context.value("plan", Json()), asked); !diff.empty()) {
    error = "cannot resume " + path + ": it was made by another command (" + diff + ")";
    return std::nullopt;
  }
  std::vector<RunRecord> kept;
  for (auto& r : report->runs)
    if (r.status != Status::Interrupted) kept.push_back(std::move(r));
  return kept;
}

}  // namespace mh
