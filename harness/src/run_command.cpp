// The run and list commands: validate everything, then run each allocator
// --runs times, interleaved, rewriting the report after every run, and print
// the summary table.
#include <fmt/format.h>
#include <unistd.h>

#include <set>

#include "commands.h"
#include "console.h"
#include "context.h"
#include "output_names.h"
#include "report_json.h"
#include "session.h"

namespace mh {

namespace {

int bad_input(const std::string& message) {
  fmt::print(stderr, "harness: {}\n", message);
  return 2;
}

}  // namespace

int list_command(const Options&) {
  auto l = find_layout();
  auto all = list_workloads(l.libexec);
  if (all.empty()) return bad_input("no workloads found in " + l.libexec);
  fmt::print("{}", format_list(all));
  return 0;
}

int run_command(const Options& o) {
  auto l = find_layout();
  std::string error;
  auto jobs = resolve_jobs(l, o.workload, o.workload_args, o.suite, o.shard, error);
  if (!jobs) return bad_input(error);

  Execution e;
  e.jobs = *jobs;
  if (o.allocators.empty()) {
    std::vector<std::string> missing;
    for (auto& a : available_builtins(default_allocator_context(l.libdir), &missing)) e.arms.push_back({a, ""});
    for (const auto& m : missing) fmt::print(stderr, "harness: skipping {}\n", m);
  }
  std::set<std::string> labels;
  for (const auto& text : o.allocators) {
    auto spec = resolve_allocator(l, text, error);
    if (!spec) return bad_input(error);
    if (!labels.insert(spec->label).second) return bad_input("allocator '" + text + "' is given twice");
    e.arms.push_back({*spec, ""});
  }

  const std::string name = o.suite.empty() ? o.workload : "suite-" + o.suite;
  if (o.out.empty()) {
    auto reserved = reserve_new_outputs("results/" + name, {".json"}, error);
    if (reserved.empty()) return bad_input(error);
    e.out = reserved[0];
  } else {
    if (auto err = check_writable(o.out); !err.empty()) return bad_input("--out: " + err);
    e.out = o.out;
  }

  e.plan = interleave(e.jobs.size(), e.arms.size(), o.runs, std::nullopt);
  e.timeout_s = o.timeout_s;
  e.sample_ms = o.sample_ms;
  e.smaps_ms = o.smaps_ms;
  e.verbose = o.verbose;
  e.progress = !o.quiet && isatty(STDERR_FILENO);
  e.context = make_context(o.argv);
  e.context["plan"] = Json{{"rounds", o.runs}, {"suite", o.suite}, {"shard", o.shard}};

  std::vector<RunRecord> runs;
  if (!execute(e, runs, error)) {
    fmt::print(stderr, "harness: {}\n", error);
    return 1;
  }
  std::map<std::string, std::vector<Headline>> headlines;
  for (const auto& job : e.jobs) headlines[job.workload.name] = headline_metrics(job.workload);
  fmt::print("{}report: {}\n", summary_table(runs, headlines), e.out);
  for (const auto& r : runs)
    if (r.status != Status::Ok) return 1;
  return 0;
}

}  // namespace mh
