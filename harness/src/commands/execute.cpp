// Plan execution, the report rewritten after every run, and resume (see
// execute.h).
#include "commands/execute.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "commands/resolve.h"
#include "measure/runner.h"
#include "report/progress.h"
#include "report/report_json.h"
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

// Rewrites the report over `runs`, adding the cost to the outcome; when it
// cannot be written, the error, and the runs rescued elsewhere if they can be.
bool write_report(const Execution& e, const ReportWriter& writer, const std::vector<RunRecord>& runs, bool complete,
                  ExecutionOutcome& outcome) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string text = writer.text(runs, complete);
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

}  // namespace

ExecutionOutcome execute(const Execution& e, std::vector<RunRecord>& runs) {
  ExecutionOutcome outcome;
  Progress progress(e.progress, e.plan.size());
  const DeclaredMetrics declared = declared_by_jobs(e.jobs);
  ReportWriter writer(e.context, declared);
  const bool to_stdout = e.out == output_file::kStdout;
  std::map<std::string, const RunRecord*> kept;
  for (const auto& r : e.kept) kept[run_key(r)] = &r;

  for (const auto& p : e.plan) {
    if ((outcome.stop_signal = interrupt::requested())) break;
    const Job& job = e.jobs[p.job];
    const Arm& arm = e.arms[p.arm];
    if (auto k = kept.find(run_key(job.workload.name, job.params, arm.allocator.label, arm.role, p.repetition));
        k != kept.end()) {
      runs.push_back(*k->second);
      ++outcome.runs_kept;
    } else {
      progress.starting(runs.size(), job.workload.name, arm.allocator.label, p.repetition);
      runs.push_back(run_one(run_request(e, job, arm, p.repetition, progress)));
      runs.back().role = arm.role;
      progress.finished(runs.back());
    }
    writer.add(runs.back());
    // Only the run just made can have been interrupted: the loop stops after it.
    outcome.complete = runs.size() == e.plan.size() && runs.back().status != Status::Interrupted;
    if (!to_stdout && !write_report(e, writer, runs, outcome.complete, outcome)) break;
  }
  outcome.stop_signal = interrupt::requested();
  if (!outcome.error.empty()) outcome.complete = false;
  // Stopped before the first run: the report says so. Standard output takes
  // the report once, at the end.
  if (runs.empty() && outcome.error.empty()) write_report(e, writer, runs, e.plan.empty(), outcome);
  else if (to_stdout) write_report(e, writer, runs, outcome.complete, outcome);
  progress.clear();
  return outcome;
}

std::string run_key(const std::string& workload, const Json& params, const std::string& allocator,
                    const std::string& role, int repetition) {
  return Json{workload, params, allocator, role, repetition}.dump();
}

std::string run_key(const RunRecord& r) {
  return run_key(r.workload, r.params, r.allocator.name, r.role, r.repetition);
}

Json plan_json(const Execution& e, const Json& extra) {
  Json jobs = Json::array();
  for (const auto& j : e.jobs) jobs.push_back(Json{{"workload", j.workload.name}, {"args", j.args}});
  Json arms = Json::array();
  for (const auto& a : e.arms) arms.push_back(Json{{"allocator", a.allocator.label}, {"role", a.role}});
  Json order = Json::array();
  for (const auto& p : e.plan) order.push_back(Json{p.job, p.arm, p.repetition});
  Json plan = extra;
  plan["jobs"] = jobs;
  plan["arms"] = arms;
  plan["order"] = order;
  if (!e.run.after_mark.empty()) plan["after"] = e.run.after_mark;
  return plan;
}

std::string plan_difference(const Json& stored, const Json& asked) {
  if (!stored.is_object()) return "the report has no plan";
  for (const auto& [key, value] : asked.items()) {
    if (!stored.contains(key)) return "the report's plan has no " + key;
    if (stored[key] != value) {
      if (key == "order") return "the order of runs differs (another seed or number of runs)";
      return key + ": the report has " + stored[key].dump() + ", the command asks for " + value.dump();
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
