// Jobs and run settings from the parsed Options (see from_options.h).
#include "commands/from_options.h"

#include <unistd.h>

#include "commands/exports.h"
#include "inputs/program.h"
#include "measure/memory_limit.h"

namespace mh {

namespace {

// harness -- PROGRAM ARGS: the one job of the program, its flags gathered into
// the JSON of a suite's command entry.
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
  if (f.no_exit_stop) j["exit_stop"] = false;
  auto p = program_from_json(j, error);
  if (!p) return std::nullopt;
  return std::vector<Job>{program_job(std::move(*p))};
}

}  // namespace

std::optional<std::vector<Job>> jobs_from_options(const Layout& l, const Options& o, std::string& error) {
  return o.program.empty() ? resolve_jobs(l, o.workload, o.workload_args, o.suite, o.shard, error)
                           : program_jobs(o, error);
}

std::string thresholds_file(const Layout& l, const Options& o) {
  return o.thresholds.empty() ? l.share + "/thresholds.json" : o.thresholds;
}

std::string check_exports(const Options& o) {
  for (const auto& [path, option] : {std::pair{o.export_markdown, "--export-markdown"}, std::pair{o.export_csv, "--export-csv"}})
    if (auto err = check_export(path, option); !err.empty()) return err;
  return "";
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
  return !o.run.ledger || ledger_built(find_layout(), error);
}

}  // namespace mh
