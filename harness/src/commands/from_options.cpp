// Jobs and run settings from the parsed Options (see from_options.h).
#include "commands/from_options.h"

#include <fmt/format.h>

#include <algorithm>

#include <cstdio>

#include <unistd.h>

#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "commands/exports.h"
#include "history/store.h"
#include "inputs/program.h"
#include "core/soak.h"
#include "measure/memory_group.h"

namespace mh {

namespace {

// The program flags gathered into the JSON of a suite's command entry (program.h), for `argv`.
Json program_entry(const ProgramFlags& f, const std::vector<std::string>& argv) {
  Json j{{"command", argv}};
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
  // A port is a number in the entry; anything else (auto, or a bad value) is
  // program.h's to check and name.
  if (!f.ready_port.empty()) {
    const bool digits = f.ready_port.size() <= 5 &&
                        std::all_of(f.ready_port.begin(), f.ready_port.end(), [](char c) { return c >= '0' && c <= '9'; });
    j["ready_port"] = digits ? Json(std::stoi(f.ready_port)) : Json(f.ready_port);
  }
  num("ready_timeout", f.ready_timeout);
  num("idle", f.idle);
  num("stop_grace", f.stop_grace);
  if (f.no_tree) j["tree"] = false;
  if (f.no_exit_stop) j["exit_stop"] = false;
  return j;
}

// harness -- PROGRAM ARGS: the one job of the program.
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
  auto p = program_from_json(program_entry(o.program_flags, o.program), error);
  if (!p) return std::nullopt;
  return std::vector<Job>{program_job(std::move(*p))};
}

// One side's command, split like shell words; its option's name in the error.
std::optional<std::vector<std::string>> option_words(const std::string& text, const char* option,
                                                      std::string& error) {
  auto words = split_words(text);
  if (!words || words->empty() || words->front().empty()) {
    error = std::string(option) + " '" + text + "' is not a command: give 'PROGRAM ARGS' (split like shell words, " +
            (words ? "no program given)" : "an open quote)");
    return std::nullopt;
  }
  return words;
}

// What both sides' results are called: --name, else the programs' base name
// (joined with -vs- when they differ).
std::string sides_name(const ProgramFlags& f, const std::vector<std::string>& base,
                       const std::vector<std::string>& cand) {
  if (!f.name.empty()) return f.name;
  const std::string a = std::filesystem::path(base.front()).filename().string();
  const std::string b = std::filesystem::path(cand.front()).filename().string();
  return a == b ? a : a + "-vs-" + b;
}

}  // namespace

std::optional<CommandSides> command_sides_from_options(const Options& o, std::string& error) {
  auto base = option_words(o.baseline_command, "--baseline-command", error);
  if (!base) return std::nullopt;
  auto cand = option_words(o.candidate_command, "--candidate-command", error);
  if (!cand) return std::nullopt;
  ProgramFlags flags = o.program_flags;
  flags.name = sides_name(flags, *base, *cand);
  std::optional<Program> sides[2];
  for (auto [side, words, option] : {std::tuple{&sides[0], &*base, "--baseline-command"},
                                     std::tuple{&sides[1], &*cand, "--candidate-command"}}) {
    *side = program_from_json(program_entry(flags, *words), error);
    if (!*side) {
      error = std::string(option) + ": " + error;
      return std::nullopt;
    }
  }
  return CommandSides{std::move(*sides[0]), std::move(*sides[1])};
}

std::optional<std::vector<Job>> jobs_from_options(const Layout& l, const Options& o, std::string& error) {
  // Balanced shards cut the plan, not the entries (balance_from_options).
  const std::string shard = o.shard_durations.empty() ? o.shard : "";
  return o.program.empty() ? resolve_jobs(l, o.workload, o.workload_args, o.suite, shard, error)
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
  e.history = o.history.target;
  if (e.history.cwd.empty()) e.history.cwd = o.program_flags.cwd;
  // The store is opened (made, or migrated and checked) before anything runs:
  // one that cannot take the runs is refused now, not after them.
  if (!e.history.file.empty() && !history::Store::open(e.history.file, error)) {
    error = "--history: " + error;
    return false;
  }
  e.progress = !o.quiet && isatty(STDERR_FILENO);
  if (!o.memory_limit.empty()) {
    auto bytes = parse_size(o.memory_limit);
    if (!bytes) {
      error = "--memory-limit " + o.memory_limit + " is not a size: give bytes or a number with K, M or G, e.g. 512M";
      return false;
    }
    e.run.memory_limit = *bytes;
  }
  if (!o.memory_high.empty()) {
    auto bytes = parse_size(o.memory_high);
    if (!bytes) {
      error = "--memory-high " + o.memory_high + " is not a size: give bytes or a number with K, M or G, e.g. 512M";
      return false;
    }
    if (const std::string why = memory_high_why_not(); !why.empty()) {
      error = "--memory-high " + o.memory_high + " needs cgroup v2's memory controller, which is not available here: " + why;
      return false;
    }
    e.run.memory_high = *bytes;
  }
  if (!o.heap_sample.empty()) {
    auto bytes = o.heap_sample == "0" ? std::optional<uint64_t>(0) : parse_size(o.heap_sample);
    if (!bytes) {
      error = "--heap-sample " + o.heap_sample +
              " is not a size: give bytes or a number with K, M or G, e.g. 512K (0: no sampling)";
      return false;
    }
    if (!o.run.ledger) {
      error = "--heap-sample " + o.heap_sample + " samples in the heap ledger: it needs --ledger";
      return false;
    }
    e.run.heap_sample = *bytes;
  }
  if (!o.soak.empty()) {
    auto seconds = parse_duration(o.soak);
    if (!seconds) {
      error = fmt::format("--soak {} is not a duration: give {}", o.soak, kDurationForms);
      return false;
    }
    e.run.soak_s = *seconds;
  }
  e.run.ledger_seed = o.heap_seed ? o.heap_seed : o.seed;
  return !o.run.ledger || ledger_built(find_layout(), error);
}

bool resolve_auto_shard(Options& o, const EnvReader& env, std::string& error) {
  if (!is_auto_shard(o.shard)) return true;
  auto s = shard_from_engines(o.shard, env, error);
  if (!s) return false;
  if (!s->status_file.empty())
    // Bazel asks a test that shards to say so by touching this file.
    if (std::FILE* f = std::fopen(s->status_file.c_str(), "a")) std::fclose(f);
  o.shard = fmt::format("{}/{}", s->shard.index, s->shard.count);
  o.shard_engine = engine_shard_json(*s);
  return true;
}

std::string refuse_run_only(const Options& o, bool durations) {
  if (o.dry_run) return "--dry-run prints the plan of a run (harness --suite NAME ... --dry-run); this command takes none";
  if (durations && !o.shard_durations.empty())
    return "--shard-durations balances the shards of a run or a comparison; this command shards by entry";
  return "";
}

bool balance_from_options(const Options& o, Execution& e, bool by_round, std::optional<BalancedPlan>& balanced,
                          std::string& error) {
  if (o.shard_durations.empty()) return true;
  if (o.shard.empty()) {
    error = "--shard-durations balances shards: give --shard I/N (or auto) with it";
    return false;
  }
  auto d = read_durations(o.shard_durations, error);
  if (!d) return false;
  balanced = cut_balanced(e, o.shard, *d, by_round, error);
  return balanced.has_value();
}

}  // namespace mh
