// Layout, jobs, allocators and pins from user input (see resolve.h).
#include "commands/resolve.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/escape.h"
#include "inputs/allocators.h"
#include "inputs/pins.h"
#include "inputs/program.h"
#include "inputs/workloads.h"
#include "sys/heap_ledger.h"

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

namespace {

// The entries to run: the suite's (or the one workload with its arguments),
// cut to the shard when one is given.
std::optional<std::vector<SuiteEntry>> entries_to_run(const Layout& l, const std::string& workload,
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
  if (shard.empty()) return entries;
  auto s = parse_shard(shard, error);
  if (!s) return std::nullopt;
  entries = select_shard(entries, *s);
  if (entries.empty()) {
    error = "shard " + shard + " has no runs";
    return std::nullopt;
  }
  return entries;
}

// A suite's command entry: {share} in the command and its set-up is where the
// harness keeps the apps suite's scripts.
std::optional<Job> suite_program_job(const Layout& l, const std::string& suite, const Json& command,
                                     std::string& error) {
  Json entry = command;
  auto share = [&](Json& a) {
    if (std::string text = a.is_string() ? a.get<std::string>() : ""; text.find("{share}") != std::string::npos)
      a = text.replace(text.find("{share}"), 7, l.share);
  };
  if (entry.contains("command") && entry["command"].is_array())
    for (auto& a : entry["command"]) share(a);
  if (entry.contains("setup")) share(entry["setup"]);
  auto p = program_from_json(entry, error);
  if (!p) {
    error = "in suite " + suite + ", entry " + json_text(command) + ": " + error;
    return std::nullopt;
  }
  return program_job(std::move(*p));
}

// An installed workload with its parameters checked against its declaration.
std::optional<Job> workload_job(const Layout& l, const SuiteEntry& e, std::string& error) {
  auto w = find_workload(l.libexec, e.workload);
  if (!w) {
    std::string names;
    for (const auto& x : list_workloads(l.libexec)) names += (names.empty() ? "" : ", ") + x.name;
    error = "unknown workload '" + e.workload + "'; valid: " + (names.empty() ? "(none in " + l.libexec + ")" : names);
    return std::nullopt;
  }
  auto params = check_params(*w, e.args, error);
  if (!params) return std::nullopt;
  Job job{*w, e.args, *params, std::nullopt};
  if (!e.name.empty()) job.workload.name = e.name;
  return job;
}

// Results are kept apart by name: two entries of one name would be mixed.
bool names_apart(const std::vector<Job>& jobs, const std::string& suite, std::string& error) {
  for (size_t i = 0; i < jobs.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (jobs[i].workload.name == jobs[k].workload.name) {
        error = "suite " + suite + " runs '" + jobs[i].workload.name +
                "' twice; give the entries different \"name\"s so that their results stay apart";
        return false;
      }
  return true;
}

}  // namespace

std::optional<std::vector<Job>> resolve_jobs(const Layout& l, const std::string& workload,
                                             const std::vector<std::string>& args, const std::string& suite,
                                             const std::string& shard, std::string& error) {
  auto entries = entries_to_run(l, workload, args, suite, shard, error);
  if (!entries) return std::nullopt;
  std::vector<Job> jobs;
  for (const auto& e : *entries) {
    auto job = e.command.is_null() ? workload_job(l, e, error) : suite_program_job(l, suite, e.command, error);
    if (!job) return std::nullopt;
    job->ledger = e.ledger;
    if (e.ledger && !ledger_built(l, error)) return std::nullopt;
    jobs.push_back(std::move(*job));
  }
  if (!names_apart(jobs, suite, error)) return std::nullopt;
  return jobs;
}

std::string ledger_library(const Layout& l) { return l.libdir + "/" + kLedgerLibraryName; }

bool ledger_built(const Layout& l, std::string& error) {
  if (access(ledger_library(l).c_str(), R_OK) == 0) return true;
  error = "the heap ledger (--ledger) needs " + ledger_library(l) + ", which is not there: build the project "
          "(cmake --build build) or install it";
  return false;
}

Job program_job(Program p) {
  Job job;
  job.workload.name = p.name;
  job.workload.binary = p.path;
  job.workload.description = Json{{"name", p.name}, {"program", escape::identity(p.argv)}};
  job.args = p.argv;
  job.params = program_params(p);
  job.program = std::move(p);
  return job;
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

std::optional<PinsFile> load_pins_with_sources(const Layout& l, std::string& error) {
  auto pins = load_pins(pins_file(l), error);
  if (!pins) return std::nullopt;
  const char* env = std::getenv("MEMHARNESS_PIN_SOURCES");
  if (!env || !*env) return pins;
  auto sources = parse_pin_sources(env, error);
  if (!sources || !apply_pin_sources(*pins, *sources, error)) {
    error = "MEMHARNESS_PIN_SOURCES: " + error + " (pins file: " + pins_file(l) + ")";
    return std::nullopt;
  }
  return pins;
}

std::optional<RepoPin> find_repo_pin(const Layout& l, const std::string& name, std::string& error) {
  auto pins = load_pins_with_sources(l, error);
  if (!pins) return std::nullopt;
  if (auto it = pins->repos.find(name); it != pins->repos.end()) return it->second;
  std::string names;
  for (const auto& [n, p] : pins->repos) names += (names.empty() ? "" : ", ") + n;
  error = "'" + name + "' is not a pin with a repository in " + pins_file(l) + "; pins with one: " +
          (names.empty() ? "none" : names);
  return std::nullopt;
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
    // Refused before a build that could take minutes.
    if (const auto why = refused_options(pin->family); !why.empty() && !rev->options.empty()) {
      error = "in allocator '" + text + "': " + why;
      return std::nullopt;
    }
    auto built = build_pin(*pin, rev->rev, pin_paths(l), error);
    if (!built) return std::nullopt;
    const std::string family = pin->family == "none" ? "custom" : pin->family;
    const std::string built_spec = family + "=" + built->library + (rev->options.empty() ? "" : ":" + rev->options);
    out = parse_allocator(built_spec, default_allocator_context(l.libdir), error);
    // Named as the user gave it, not by the cache's path.
    if (const std::string as_built = "'" + built_spec + "'"; !out && error.find(as_built) != std::string::npos)
      error.replace(error.find(as_built), as_built.size(), "'" + text + "' (" + built->library + ")");
  } else {
    out = parse_allocator(spec, default_allocator_context(l.libdir), error);
  }
  if (out) out->label = text;
  return out;
}

}  // namespace mh
