// micro: allocator micro benchmarks (Google Benchmark) run as a workload. The
// workload's parameters become Google Benchmark flags, its JSON output is read
// back, and each benchmark's median real time is reported as metric ns.<name>.
// Main thread only, apart from the threads Google Benchmark starts.
#include <benchmark/benchmark.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "benchmarks.h"
#include "mhwl/files.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

std::vector<mhwl::MetricSpec> metric_specs() {
  const std::map<std::string, std::string> what = {
      {"malloc_free_random", "free one of 1024 live blocks at random and malloc 16-1039 bytes in its place"},
      {"malloc_free_128k", "malloc(128 KiB) and free it"},
      {"realloc_grow", "one realloc of a block growing by 16 bytes from 16 B to 64 KiB"},
      {"calloc_4k", "calloc(1, 4096) and free it"},
      {"producer_consumer", "malloc on one thread, free on another through an SPSC ring (per block)"},
      {"batch_handoff_64b", "one batch of 256 blocks of 64 B, malloc'd on one thread and freed on another "
                            "(ring of 8 batches)"},
      {"batch_handoff_64b_1cpu", "batch_handoff_64b with both threads on one CPU, taking turns (no cache-line "
                                 "transfers between cores)"},
      {"live_set_10k_8b_4k", "free one of 10 000 live blocks at random and malloc 8-4096 bytes in its place"},
      {"larson_2t_8b_1000b", "one round on each of 2 threads: a new thread takes over 1000 live blocks and "
                             "replaces 10 000 at random with 8-1000 bytes"},
  };
  const std::map<std::string, std::string> columns = {
      {"malloc_free_random", "malloc+free"}, {"producer_consumer", "cross-thread free"}};
  std::vector<mhwl::MetricSpec> out;
  for (const auto& name : micro::benchmark_names())
    out.push_back({"ns." + name, "ns", "lower", "median real time of one iteration: " + what.at(name),
                   columns.count(name) ? columns.at(name) : ""});
  return out;
}

const mhwl::WorkloadSpec kSpec{
    "micro",
    "malloc/free micro benchmarks on Google Benchmark",
    "000-004: the allocator micro benchmarks the seeds count instructions with (25 M malloc + "
    "free of 16..1039 bytes; 20 M malloc(128 KiB) + free)",
    {
        {"repetitions", ParamType::Int, "5", "1", 1, 1000, {}, "repetitions of each benchmark (--benchmark_repetitions)"},
        {"min-time", ParamType::Double, "0.5", "0.01", 0.001, 3600, {}, "seconds each repetition runs at least (--benchmark_min_time)"},
        {"filter", ParamType::String, ".", "", 0, -1, {}, "regular expression of the benchmarks to run (--benchmark_filter)"},
        {"pin", ParamType::Bool, "false", "", 0, -1, {},
         "pin benchmark thread i to the i-th CPU the workload may run on, for the whole run (threads it starts "
         "inherit it): no migration mid-repetition"},
    },
    metric_specs(),
    "benchmarks-done",
    {},
    {"workload.ns.*", "peak_rss_kb"}};

// "producer_consumer/real_time/threads:2" -> "producer_consumer"
std::string base_name(const std::string& run_name) { return run_name.substr(0, run_name.find('/')); }

double to_ns(double t, const std::string& unit) {
  if (unit == "us") return t * 1e3;
  if (unit == "ms") return t * 1e6;
  if (unit == "s") return t * 1e9;
  return t;
}

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const int64_t reps = p.integer("repetitions");
  mhwl::TempDir dir("memharness-micro");
  const std::string out_path = dir.path() + "/benchmarks.json";

  std::vector<std::string> args = {
      "micro",
      "--benchmark_repetitions=" + std::to_string(reps),
      "--benchmark_min_time=" + std::to_string(p.number("min-time")),
      "--benchmark_filter=" + p.text("filter"),
      "--benchmark_out=" + out_path,
      "--benchmark_out_format=json",
  };
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  argv.push_back(nullptr);
  benchmark::Initialize(&argc, argv.data());
  if (benchmark::ReportUnrecognizedArguments(argc, argv.data())) return 2;
  micro::register_benchmarks();
  if (!micro::set_pinning(p.flag("pin"))) {
    std::cerr << "micro: --pin: the CPUs this process may run on cannot be read: " << std::strerror(errno) << "\n";
    return 2;
  }

  ctx.report.mark("start");
  benchmark::RunSpecifiedBenchmarks();
  ctx.report.mark("benchmarks-done");
  benchmark::Shutdown();

  std::ifstream in(out_path);
  auto json = nlohmann::ordered_json::parse(in, nullptr, false);
  if (json.is_discarded() || !json.contains("benchmarks")) {
    for (const auto& name : micro::benchmark_names())
      ctx.report.metric_null("ns." + name, "Google Benchmark wrote no readable JSON to " + out_path);
    return 1;
  }

  // The median aggregate when there are repetitions, else the one run.
  std::map<std::string, double> ns;
  for (const auto& b : json["benchmarks"]) {
    const std::string name = base_name(b.value("run_name", b.value("name", "")));
    const bool aggregate = b.value("run_type", "") == "aggregate";
    const bool wanted = reps > 1 ? aggregate && b.value("aggregate_name", "") == "median" : !aggregate;
    if (wanted && b.contains("real_time"))
      ns[name] = to_ns(b["real_time"].get<double>(), b.value("time_unit", "ns"));
  }
  for (const auto& name : micro::benchmark_names()) {
    if (auto it = ns.find(name); it != ns.end()) ctx.report.metric("ns." + name, it->second);
    else ctx.report.metric_null("ns." + name, "not run: excluded by --filter '" + p.text("filter") + "'");
  }
  ctx.report.data("benchmarks", json);
  nlohmann::ordered_json pinning = {{"cpus", micro::pin_cpus()},
                                     {"ran_on", nlohmann::ordered_json::object()},
                                     {"allowed", nlohmann::ordered_json::object()}};
  for (const auto& [name, threads] : micro::cpus_ran_on())
    for (const auto& t : threads) {
      pinning["ran_on"][name].push_back(t.cpu);
      pinning["allowed"][name].push_back(t.allowed);
    }
  ctx.report.data("pinning", pinning);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
