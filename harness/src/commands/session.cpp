// Layout, input resolution and plan execution (see session.h).
#include "commands/session.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "report/console.h"
#include "sys/interrupt.h"
#include "measure/memory_limit.h"
#include "inputs/pins.h"
#include "report/report_json.h"
#include "measure/runner.h"

namespace mh {

Layout find_layout() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  auto prefix = exe.parent_path().parent_path();
  Layout l{(prefix / "libexec" / "memharness").string(), (prefix / "lib").string(),
           (prefix / "share" / "memharness").string(), MEMHARNESS_SOURCE_DIR};
  if (const char* dir = std::getenv("MEMHARNESS_WORKLOAD_DIR")) l.libexec = dir;
  // scav@REV builds from another clone (with its own build/pins/ cache).
  if (const char* dir = std::getenv("MEMHARNESS_SOURCE_DIR")) l.source = dir;
  return l;
}

std::optional<std::vector<Job>> resolve_jobs(const Layout& l, const std::string& workload,
                                             const std::vector<std::string>& args, const std::string& suite,
                                             const std::string& shard, std::string& error) {
  std::vector<SuiteEntry> entries;
  if (!suite.empty()) {
    if (!workload.empty()) {
      error = "give --workload or --suite, not both";
      return std::nullopt;
    }
    if (!args.empty()) {
      error = "unexpected arguments with --suite: " + args.front() + " (a suite fixes each workload's parameters)";
      return std::nullopt;
    }
    auto s = load_suite(l.share + "/suites.json", suite, error);
    if (!s) return std::nullopt;
    entries = *s;
  } else if (!workload.empty()) {
    entries.push_back({workload, args, Json(), ""});
  } else {
    error = "no workload given: use --workload NAME or --suite NAME (see harness --list)";
    return std::nullopt;
  }
  if (!shard.empty()) {
    auto s = parse_shard(shard, error);
    if (!s) return std::nullopt;
    entries = select_shard(entries, *s);
    if (entries.empty()) {
      error = "shard " + shard + " has no runs";
      return std::nullopt;
    }
  }
  std::vector<Job> jobs;
  for (const auto& e : entries) {
    if (!e.command.is_null()) {
      // {share} in the command and its set-up: where the harness keeps the
      // apps suite's scripts.
      Json entry = e.command;
      auto share = [&](Json& a) {
        if (std::string text = a.is_string() ? a.get<std::string>() : ""; text.find("{share}") != std::string::npos)
          a = text.replace(text.find("{share}"), 7, l.share);
      };
      if (entry.contains("command") && entry["command"].is_array())
        for (auto& a : entry["command"]) share(a);
      if (entry.contains("setup")) share(entry["setup"]);
      auto p = program_from_json(entry, error);
      if (!p) {
        error = "in suite " + suite + ", entry " + e.command.dump() + ": " + error;
        return std::nullopt;
      }
      jobs.push_back(program_job(std::move(*p)));
      continue;
    }
    auto w = find_workload(l.libexec, e.workload);
    if (!w) {
      std::string names;
      for (const auto& x : list_workloads(l.libexec)) names += (names.empty() ? "" : ", ") + x.name;
      error = "unknown workload '" + e.workload + "'; valid: " + (names.empty() ? "(none in " + l.libexec + ")" : names);
      return std::nullopt;
    }
    auto params = check_params(*w, e.args, error);
    if (!params) return std::nullopt;
    jobs.push_back(Job{*w, e.args, *params, std::nullopt});
    if (!e.name.empty()) jobs.back().workload.name = e.name;
  }
  // Results are kept apart by name: two entries of one name would be mixed.
  for (size_t i = 0; i < jobs.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (jobs[i].workload.name == jobs[k].workload.name) {
        error = "suite " + suite + " runs '" + jobs[i].workload.name +
                "' twice; give the entries different \"name\"s so that their results stay apart";
        return std::nullopt;
      }
  return jobs;
}

std::string pins_file(const Layout& l) {
  const char* env = std::getenv("MEMHARNESS_PINS");
  return env && *env ? env : l.share + "/pins.json";
}

PinPaths pin_paths(const Layout& l) {
  PinPaths p;
  p.memharness_source = l.source;
  if (const char* env = std::getenv("MEMHARNESS_PIN_CACHE"); env && *env) {
    p.cache = env;
  } else if (!l.source.empty()) {
    p.cache = l.source + "/build/pins";
  } else {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    p.cache = std::string(xdg && *xdg ? xdg : std::string(home ? home : "/tmp") + "/.cache") + "/memharness/pins";
  }
  return p;
}

std::optional<RepoPin> find_repo_pin(const Layout& l, const std::string& name, std::string& error) {
  auto pins = load_pins(pins_file(l), error);
  if (!pins) return std::nullopt;
  if (auto it = pins->repos.find(name); it != pins->repos.end()) return it->second;
  std::string names;
  for (const auto& [n, p] : pins->repos) names += (names.empty() ? "" : ", ") + n;
  error = "'" + name + "' is not a pin with a repository in " + pins_file(l) + "; pins with one: " +
          (names.empty() ? "none" : names);
  return std::nullopt;
}

Job program_job(Program p) {
  Job job;
  job.workload.name = p.name;
  job.workload.binary = p.path;
  job.workload.description = Json{{"name", p.name}, {"program", p.argv}};
  job.args = p.argv;
  job.params = program_params(p);
  job.program = std::move(p);
  return job;
}

std::optional<std::vector<Job>> program_jobs(const Options& o, std::string& error) {
  if (!o.workload.empty() || !o.suite.empty()) {
    error = "give --workload, --suite or -- PROGRAM [ARGS...], not more than one";
    return std::nullopt;
  }
  if (!o.workload_args.empty()) {
    error = "unexpected arguments before --: " + o.workload_args.front() +
            " (the program's own arguments follow it: harness [OPTIONS] -- PROGRAM [ARGS...])";
    return std::nullopt;
  }
  const ProgramFlags& f = o.program_flags;
  Json j{{"command", o.program}};
  auto text = [&](const char* key, const std::string& v) {
    if (!v.empty()) j[key] = v;
  };
  auto list = [&](const char* key, const std::vector<std::string>& v) {
    if (!v.empty()) j[key] = v;
  };
  auto num = [&](const char* key, auto v) {
    if (v) j[key] = *v;
  };
  text("name", f.name);
  text("cwd", f.cwd);
  text("stdin", f.stdin_path);
  text("load", f.load);
  text("ready", f.ready);
  text("setup", f.setup);
  list("env", f.env);
  list("mark_on_output", f.mark_on_output);
  list("mark_at", f.mark_at);
  list("load_metric", f.load_metric);
  num("expect_exit", f.expect_exit);
  num("ready_port", f.ready_port);
  num("ready_timeout", f.ready_timeout);
  num("idle", f.idle);
  num("stop_grace", f.stop_grace);
  if (f.no_tree) j["tree"] = false;
  auto p = program_from_json(j, error);
  if (!p) return std::nullopt;
  return std::vector<Job>{program_job(std::move(*p))};
}

std::optional<AllocatorSpec> resolve_allocator(const Layout& l, const std::string& text, std::string& error) {
  auto pins = load_pins(pins_file(l), error);
  if (!pins) return std::nullopt;
  std::string spec = text;
  if (auto it = pins->specs.find(text); it != pins->specs.end()) spec = it->second;
  std::optional<AllocatorSpec> out;
  if (auto rev = parse_pin_revision(spec)) {
    auto pin = find_repo_pin(l, rev->name, error);
    if (!pin) {
      error = "allocator '" + text + "': " + error;
      return std::nullopt;
    }
    auto built = build_pin(*pin, rev->rev, pin_paths(l), error);
    if (!built) return std::nullopt;
    const std::string family = pin->family == "none" ? "custom" : pin->family;
    out = parse_allocator(family + "=" + built->library + (rev->options.empty() ? "" : ":" + rev->options),
                          default_allocator_context(l.libdir), error);
  } else {
    out = parse_allocator(spec, default_allocator_context(l.libdir), error);
  }
  if (out) out->label = text;
  return out;
}

bool apply_run_options(const Options& o, Execution& e, std::string& error) {
  e.run = o.run;
  e.verbose = o.verbose;
  e.progress = !o.quiet && isatty(STDERR_FILENO);
  if (!o.memory_limit.empty()) {
    auto bytes = parse_size(o.memory_limit);
    if (!bytes) {
      error = "--memory-limit " + o.memory_limit + " is not a size: give bytes or a number with K, M or G, e.g. 512M";
      return false;
    }
    e.run.memory_limit = *bytes;
  }
  return true;
}

std::string check_export(const std::string& path, const std::string& option) {
  if (path.empty() || path == "-") return "";
  auto e = check_writable(path);
  return e.empty() ? "" : option + ": " + e;
}

std::string write_export(const std::string& path, const std::string& text) {
  if (path.empty()) return "";
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return "";
  }
  return write_atomic(path, text);
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

namespace {

// Where the runs go when the report cannot be written any more: beside the
// system's temporary files, named so it cannot collide.
std::string rescue_path(const std::string& out) {
  const char* t = std::getenv("TMPDIR");
  std::string dir = (t && *t) ? t : "/tmp";
  return dir + "/memharness-rescued-" + std::to_string(getpid()) + "-" +
         std::filesystem::path(out).filename().string();
}

}  // namespace

ExecutionOutcome execute(const Execution& e, std::vector<RunRecord>& runs) {
  ExecutionOutcome outcome;
  Progress progress(e.progress, e.plan.size());
  DeclaredMetrics declared;
  for (const auto& job : e.jobs) declared[job.workload.name] = declared_metric_specs(job.workload);
  ReportWriter writer(e.context, declared);
  std::map<std::string, const RunRecord*> kept;
  for (const auto& r : e.kept) kept[run_key(r)] = &r;

  auto write = [&](bool complete) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string text = writer.text(runs, complete);
    outcome.error = write_atomic(e.out, text);
    outcome.write_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    outcome.report_bytes = text.size();
    if (!outcome.error.empty()) {
      const std::string rescue = rescue_path(e.out);
      if (write_atomic(rescue, text).empty()) outcome.rescue = rescue;
    }
    return outcome.error.empty();
  };

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
      RunRequest req;
      req.workload = job.workload.name;
      req.binary = job.workload.binary;
      req.args = job.args;
      req.params = job.params;
      req.allocator = arm.allocator;
      req.repetition = p.repetition;
      req.run = e.run;
      req.pass_output = e.verbose;
      req.declared_metrics = declared_metrics(job.workload);
      // A program under --load idles after its load: its after.* figures count from there.
      req.declared_after = !job.program                  ? declared_after_mark(job.workload)
                           : job.program->load_argv.empty() ? ""
                                                            : "load-end";
      req.on_progress = [&](double ms, const std::string& mark) { progress.running(ms, mark); };
      if (job.program) req.program = &*job.program;
      runs.push_back(run_one(req));
      runs.back().role = arm.role;
      progress.finished(runs.back());
    }
    writer.add(runs.back());
    // Only the run just made can have been interrupted: the loop stops after it.
    outcome.complete = runs.size() == e.plan.size() && runs.back().status != Status::Interrupted;
    if (!write(outcome.complete)) break;
  }
  outcome.stop_signal = interrupt::requested();
  if (!outcome.error.empty()) outcome.complete = false;
  if (runs.empty() && outcome.error.empty()) write(e.plan.empty());  // stopped before the first run
  progress.clear();
  return outcome;
}

}  // namespace mh
