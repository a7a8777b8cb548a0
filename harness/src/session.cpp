// Layout, input resolution and plan execution (see session.h).
#include "session.h"

#include <filesystem>

#include "console.h"
#include "pins.h"
#include "report_json.h"
#include "runner.h"

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
    entries.push_back({workload, args});
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
    auto w = find_workload(l.libexec, e.workload);
    if (!w) {
      std::string names;
      for (const auto& x : list_workloads(l.libexec)) names += (names.empty() ? "" : ", ") + x.name;
      error = "unknown workload '" + e.workload + "'; valid: " + (names.empty() ? "(none in " + l.libexec + ")" : names);
      return std::nullopt;
    }
    auto params = check_params(*w, e.args, error);
    if (!params) return std::nullopt;
    jobs.push_back(Job{*w, e.args, *params});
  }
  return jobs;
}

std::optional<AllocatorSpec> resolve_allocator(const Layout& l, const std::string& text, std::string& error) {
  std::string spec = text;
  if (auto named = lookup_pin(l.share + "/pins.json", text)) spec = *named;
  std::optional<AllocatorSpec> out;
  if (is_scav_revision(spec)) {
    auto lib = build_scav_at(l.source, spec.substr(5), error);
    if (!lib) return std::nullopt;
    out = parse_allocator("scav=" + *lib, default_allocator_context(l.libdir), error);
  } else {
    out = parse_allocator(spec, default_allocator_context(l.libdir), error);
  }
  if (out) out->label = text;
  return out;
}

bool execute(const Execution& e, std::vector<RunRecord>& runs, std::string& error) {
  Progress progress(e.progress, e.plan.size());
  for (const auto& p : e.plan) {
    const Job& job = e.jobs[p.job];
    const Arm& arm = e.arms[p.arm];
    progress.starting(runs.size(), job.workload.name, arm.allocator.label, p.repetition);
    RunRequest req{job.workload.name, job.workload.binary, job.args, job.params, arm.allocator, p.repetition,
                   e.timeout_s, e.sample_ms, e.smaps_ms, e.verbose, declared_metrics(job.workload)};
    runs.push_back(run_one(req));
    runs.back().role = arm.role;
    progress.finished(runs.back());
    if (auto err = write_atomic(e.out, dump_canonical(make_report(e.context, runs))); !err.empty()) {
      progress.clear();
      error = err;
      return false;
    }
  }
  progress.clear();
  return true;
}

}  // namespace mh
