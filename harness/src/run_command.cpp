// The run command: validate everything, then run each allocator --runs times,
// interleaved, rewriting the report after every run, and print the summary.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "allocators.h"
#include "commands.h"
#include "console.h"
#include "context.h"
#include "report_json.h"
#include "runner.h"
#include "workloads.h"

namespace mh {

namespace {

// Where the workload binaries and this build's libraries are: beside the
// harness, in the same layout in the build tree and when installed.
struct Layout {
  std::string libexec, libdir;
};

Layout layout() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  auto prefix = exe.parent_path().parent_path();
  Layout l{(prefix / "libexec" / "memharness").string(), (prefix / "lib").string()};
  if (const char* dir = std::getenv("MEMHARNESS_WORKLOAD_DIR")) l.libexec = dir;
  return l;
}

int bad_input(const std::string& message) {
  fmt::print(stderr, "harness: {}\n", message);
  return 2;
}

}  // namespace

int list_command(const Options&) {
  auto l = layout();
  auto all = list_workloads(l.libexec);
  if (all.empty()) return bad_input("no workloads found in " + l.libexec);
  fmt::print("{}", format_list(all));
  return 0;
}

int run_command(const Options& o) {
  auto l = layout();
  auto workload = find_workload(l.libexec, o.workload);
  if (!workload) {
    std::string names;
    for (const auto& w : list_workloads(l.libexec)) names += (names.empty() ? "" : ", ") + w.name;
    return bad_input("unknown workload '" + o.workload + "'; valid: " + (names.empty() ? "(none found in " + l.libexec + ")" : names));
  }
  std::string error;
  auto params = check_params(*workload, o.workload_args, error);
  if (!params) return bad_input(error);

  auto actx = default_allocator_context(l.libdir);
  std::vector<AllocatorSpec> allocators;
  if (o.allocators.empty()) {
    std::vector<std::string> missing;
    allocators = available_builtins(actx, &missing);
    for (const auto& m : missing) fmt::print(stderr, "harness: skipping {}\n", m);
  }
  std::set<std::string> labels;
  for (const auto& text : o.allocators) {
    auto spec = parse_allocator(text, actx, error);
    if (!spec) return bad_input(error);
    if (!labels.insert(spec->label).second) return bad_input("allocator '" + text + "' is given twice");
    allocators.push_back(*spec);
  }

  const std::string out = o.out.empty() ? "results/" + o.workload + "-" + utc_now(true) + ".json" : o.out;
  if (auto e = check_writable(out); !e.empty()) return bad_input(e);

  const Json context = make_context(o.argv);
  std::vector<RunRecord> runs;
  Progress progress(!o.quiet && isatty(STDERR_FILENO), allocators.size() * size_t(o.runs));
  bool all_ok = true;
  for (int rep = 1; rep <= o.runs; ++rep) {
    for (const auto& alloc : allocators) {
      progress.starting(runs.size(), o.workload, alloc.label, rep);
      RunRequest req{o.workload, workload->binary, o.workload_args, *params, alloc, rep, o.timeout_s, o.sample_ms, o.verbose,
                     declared_metrics(*workload)};
      runs.push_back(run_one(req));
      progress.finished(runs.back());
      all_ok = all_ok && runs.back().status == Status::Ok;
      if (auto e = write_atomic(out, dump_canonical(make_report(context, runs))); !e.empty()) {
        progress.clear();
        fmt::print(stderr, "harness: {}\n", e);
        return 1;
      }
    }
  }
  progress.clear();
  fmt::print("{}report: {}\n", summary_table(runs), out);
  return all_ok ? 0 : 1;
}

}  // namespace mh
