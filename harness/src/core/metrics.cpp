// The metric registry (see metrics.h).
#include "core/metrics.h"

#include <fnmatch.h>

#include <algorithm>

#include <set>

namespace mh {

namespace {

using R = const RunRecord&;
using V = std::optional<double>;
using W = RunRecord&;

constexpr MetricScope kRun = MetricScope::Run, kPhase = MetricScope::Phase, kAfter = MetricScope::After;

}  // namespace

const char* scope_name(MetricScope s) {
  return s == MetricScope::Run ? "run" : s == MetricScope::Phase ? "phase" : "after";
}

const std::vector<MetricSpec>& metric_registry() {
  // name, unit, better, threshold, min_delta, about, scope, column title, value, setter
  static const std::vector<MetricSpec> registry = {
      {"peak_rss_kb", "KiB", "lower", 0.03, 1024,
       "largest RSS of any sample, raised to the kernel's high-water mark where known (peak_from)", kRun, "peak RSS",
       [](R r) -> V { return r.samples.empty() ? V() : V(double(r.peak_rss_kb)); }, [](W r, double v) { r.peak_rss_kb = int64_t(v); }},
      // The run's memory cgroup (measure/memory_group.h); docs/memory-needed.md says what each means on v1 and v2.
      {"cgroup_peak_kb", "KiB", "lower", 0.03, 1024,
       "the most the run's memory cgroup was charged at once, page cache included (v2 memory.peak, v1 "
       "memory.max_usage_in_bytes): at or above peak RSS when the program writes or reads files",
       kRun, "cgroup peak", [](R r) { return r.memory_group.peak_kb; }, [](W r, double v) { r.memory_group.peak_kb = v; }},
      {"peak_anon_kb", "KiB", "lower", 0.03, 1024, "largest anonymous RSS of any sample (the heap's part of the peak)",
       kRun, "", [](R r) -> V { return r.samples.empty() ? V() : V(double(r.peak_anon_kb)); }, nullptr},
      {"hwm_kb", "KiB", "lower", 0.03, 1024,
       "the kernel's peak RSS (VmHWM): the workload's reading before exit, or the largest of the phases' when the "
       "harness reset it at marks",
       kRun, "", [](R r) { return r.hwm_kb.value; }, [](W r, double v) { r.hwm_kb.value = v; }},
      {"maxrss_kb", "KiB", "none", 0.05, 0,
       "wait4's ru_maxrss, raised to the phases' VmHWM peaks where the harness reset VmHWM at marks (the reset lowers "
       "it too): keeps the harness's own resident image from before the child's exec, so below about 13 MB it "
       "measures the harness, not the workload (hwm_kb is the workload's own)",
       kRun, "", [](R r) -> V { return double(r.maxrss_kb); }, [](W r, double v) { r.maxrss_kb = int64_t(v); }},
      {"minflt", "faults", "lower", 0.10, 64, "minor page faults (wait4)", kRun, "minor faults",
       [](R r) -> V { return double(r.minflt); }, [](W r, double v) { r.minflt = int64_t(v); }},
      {"majflt", "faults", "none", 0.05, 0, "major page faults (wait4)", kRun, "",
       [](R r) -> V { return double(r.majflt); }, [](W r, double v) { r.majflt = int64_t(v); }},
      {"utime_ms", "ms", "none", 0.05, 0, "user CPU time (wait4)", kRun, "", [](R r) -> V { return r.utime_ms; }, [](W r, double v) { r.utime_ms = v; }},
      {"stime_ms", "ms", "none", 0.05, 0, "system CPU time (wait4)", kRun, "", [](R r) -> V { return r.stime_ms; }, [](W r, double v) { r.stime_ms = v; }},
      {"wall_ms", "ms", "lower", 0.10, 5, "from spawn to exit", kRun, "wall", [](R r) -> V { return r.wall_ms; }, [](W r, double v) { r.wall_ms = v; }},
      {"cpu_ms", "ms", "lower", 0.10, 5, "user + system CPU time", kRun, "CPU",
       [](R r) -> V { return r.cpu_ms; }, nullptr},
      {"psi_some_ms", "ms", "lower", 0.25, 5,
       "time at least one task of the run stalled on memory (PSI some of its own v2 cgroup: reclaim, refaults, "
       "throttling at memory.high); near 0 when the run had the memory it needed",
       kRun, "stall", [](R r) { return r.memory_group.psi_some_ms; }, [](W r, double v) { r.memory_group.psi_some_ms = v; }},
      {"psi_full_ms", "ms", "lower", 0.25, 5,
       "time every runnable task of the run stalled on memory at once (PSI full of its own v2 cgroup)", kRun, "",
       [](R r) { return r.memory_group.psi_full_ms; }, [](W r, double v) { r.memory_group.psi_full_ms = v; }},
      {"memory_high_events", "count", "none", 0.10, 0,
       "times the run's cgroup went past --memory-high and was throttled (v2 memory.events high; v1 has none)", kRun,
       "", [](R r) { return r.memory_group.high_events; }, [](W r, double v) { r.memory_group.high_events = v; }},
      {"memory_max_events", "count", "none", 0.10, 0,
       "times a charge of the run's cgroup hit its limit and had to reclaim first (v2 memory.events max, v1 "
       "memory.failcnt)",
       kRun, "", [](R r) { return r.memory_group.max_events; }, [](W r, double v) { r.memory_group.max_events = v; }},
      {"memory_oom_kills", "count", "none", 0.10, 0,
       "processes the kernel's OOM killer ended in the run's cgroup (v2 memory.events oom_kill, v1 "
       "memory.oom_control oom_kill)",
       kRun, "", [](R r) { return r.memory_group.oom_kills; }, [](W r, double v) { r.memory_group.oom_kills = v; }},
      {"vol_ctxsw", "switches", "none", 0.05, 0, "voluntary context switches (wait4)", kRun, "",
       [](R r) -> V { return double(r.vol_ctxsw); }, [](W r, double v) { r.vol_ctxsw = int64_t(v); }},
      {"invol_ctxsw", "switches", "none", 0.05, 0, "involuntary context switches (wait4)", kRun, "",
       [](R r) -> V { return double(r.invol_ctxsw); }, [](W r, double v) { r.invol_ctxsw = int64_t(v); }},
      {"final_rss_kb", "KiB", "lower", 0.05, 1024, "RSS at the workload's end mark (after its teardown, just before it exits), else at the last sample", kRun,
       "RSS at exit", [](R r) -> V { return r.samples.empty() ? V() : V(double(r.final_rss_kb)); }, [](W r, double v) { r.final_rss_kb = int64_t(v); }},
      // The curve (curve.cpp): values in RunRecord::curve.
      {"rss_area_mb_s", "MB*s", "lower", 0.05, 0.5, "area under the RSS curve over the whole run", kRun, "", nullptr, nullptr},
      {"after.rss_100ms_kb", "KiB", "lower", 0.05, 1024, "RSS 0.1 s after the --after mark", kAfter, "", nullptr, nullptr},
      {"after.anon_100ms_kb", "KiB", "none", 0.05, 1024, "anonymous RSS 0.1 s after the --after mark", kAfter, "", nullptr, nullptr},
      {"after.rss_1s_kb", "KiB", "lower", 0.05, 1024, "RSS 1 s after the --after mark", kAfter, "", nullptr, nullptr},
      {"after.anon_1s_kb", "KiB", "none", 0.05, 1024, "anonymous RSS 1 s after the --after mark", kAfter, "", nullptr, nullptr},
      {"after.rss_10s_kb", "KiB", "lower", 0.05, 1024, "RSS 10 s after the --after mark", kAfter, "", nullptr, nullptr},
      {"after.anon_10s_kb", "KiB", "none", 0.05, 1024, "anonymous RSS 10 s after the --after mark", kAfter, "", nullptr, nullptr},
      {"after.ms_to_half", "ms", "lower", 0.10, 10,
       "from the --after mark until half the RSS above the start is given back", kAfter, "", nullptr, nullptr},
      {"after.ms_to_90pct", "ms", "lower", 0.10, 10,
       "from the --after mark until 90% of the RSS above the start is given back", kAfter, "", nullptr, nullptr},
      {"after.area_mb_s", "MB*s", "lower", 0.05, 0.5, "area under the RSS curve from the --after mark to the end",
       kAfter, "", nullptr, nullptr},
      {"phase.*.area_mb_s", "MB*s", "none", 0.05, 0.5, "area under the RSS curve in the phase", kPhase, "", nullptr, nullptr},
      {"phase.*.peak_rss_kb", "KiB", "none", 0.03, 1024,
       "peak RSS of the phase: VmHWM reset at its opening mark where the kernel allows it, else the sampled maximum",
       kPhase, "", nullptr, nullptr},
      {"phase.*.minflt", "faults", "none", 0.10, 64, "minor faults in the phase", kPhase, "", nullptr, nullptr},
      // The heap ledger's (--ledger; curve.cpp): the live heap is the usable
      // size of the blocks the program holds; "outside" is anonymous RSS minus
      // it: what the allocator keeps, plus stacks, the program's own mappings
      // and heaps that are not malloc's; negative when live blocks were never touched.
      {"peak_heap_live_kb", "KiB", "lower", 0.03, 1024, "largest live malloc heap of any sample (usable bytes)", kRun,
       "peak live heap", nullptr, nullptr},
      {"outside_at_start_kb", "KiB", "none", 0.05, 1024,
       "anonymous RSS outside the live heap at the start mark (else the first sample): the level it comes back to",
       kRun, "", nullptr, nullptr},
      {"alloc_rate_per_s", "calls/s", "none", 0.10, 0, "allocation calls per second of the run", kRun, "", nullptr, nullptr},
      {"after.outside_100ms_kb", "KiB", "lower", 0.05, 1024,
       "anonymous RSS outside the live heap 0.1 s after the --after mark (what the allocator still keeps)", kAfter, "",
       nullptr, nullptr},
      {"after.outside_1s_kb", "KiB", "lower", 0.05, 1024, "anonymous RSS outside the live heap 1 s after the --after mark",
       kAfter, "", nullptr, nullptr},
      {"after.outside_10s_kb", "KiB", "lower", 0.05, 1024,
       "anonymous RSS outside the live heap 10 s after the --after mark", kAfter, "", nullptr, nullptr},
      {"after.outside_ms_to_90pct", "ms", "lower", 0.10, 10,
       "from the --after mark until the memory outside the live heap is 90% of the way back to its start level",
       kAfter, "", nullptr, nullptr},
      {"phase.*.peak_heap_live_kb", "KiB", "none", 0.03, 1024, "largest live heap in the phase", kPhase, "", nullptr, nullptr},
      {"phase.*.outside_end_kb", "KiB", "none", 0.05, 1024,
       "anonymous RSS outside the live heap at the phase's closing mark", kPhase, "", nullptr, nullptr},
      {"phase.*.outside_net_end_kb", "KiB", "none", 0.05, 1024,
       "the same less LazyFree (pages given back with MADV_FREE, resident until the kernel needs them)", kPhase, "",
       nullptr, nullptr},
      // Growth over the run (run_growth.cpp): Theil-Sen slopes over the growth
      // window (after the warm-up, or between the growth-start and growth-end
      // marks); reported, not gated, unless a workload names them.
      {"growth.live_mb_per_min", "MB/min", "lower", 0.10, 0.1,
       "slope of the live heap over the growth window (--ledger): the program's growth, a leak or a cache that never "
       "stops",
       kRun, "", nullptr, nullptr},
      {"growth.outside_mb_per_min", "MB/min", "lower", 0.10, 0.1,
       "slope of anonymous RSS outside the live heap over the growth window (--ledger): mostly the allocator's "
       "(fragmentation, retention), also stacks and heaps that are not malloc's",
       kRun, "", nullptr, nullptr},
      {"growth.anon_mb_per_min", "MB/min", "lower", 0.10, 0.1,
       "slope of anonymous RSS over the growth window (runs without --ledger): the program's and the allocator's "
       "growth together",
       kRun, "", nullptr, nullptr},
  };
  return registry;
}

const std::vector<std::string>& default_gated_metrics() {
  static const std::vector<std::string> gated = {"peak_rss_kb", "rss_area_mb_s", "wall_ms", "cpu_ms"};
  return gated;
}

const MetricSpec* find_metric(const std::string& metric) {
  for (const auto& m : metric_registry())
    if (fnmatch(m.name, metric.c_str(), 0) == 0) return &m;
  return nullptr;
}

namespace {

constexpr const char* kWorkloadPrefix = "workload.";
constexpr const char* kPerfPrefix = "perf.";

bool has_prefix(const std::string& metric, const char* prefix) { return metric.rfind(prefix, 0) == 0; }

// Why a run metric the record's fields hold has no value: a run without
// samples has no RSS figures; VmHWM says its own reason.
std::string registry_reason(const RunRecord& r, const MetricSpec& spec) {
  if (r.samples.empty()) return kNoSampleReason;
  if (spec.name == std::string("hwm_kb")) return r.hwm_kb.reason;
  return "not measured";
}

}  // namespace

std::string workload_metric(const std::string& name) { return kWorkloadPrefix + name; }

std::optional<std::string> workload_metric_name(const std::string& metric) {
  if (!has_prefix(metric, kWorkloadPrefix)) return std::nullopt;
  return metric.substr(std::string(kWorkloadPrefix).size());
}

std::vector<RunMetric> run_metrics(const RunRecord& r) {
  std::vector<RunMetric> out;
  for (const auto& spec : metric_registry()) {
    if (!spec.get) continue;
    if (auto u = r.unmeasured.find(spec.name); u != r.unmeasured.end()) {
      out.push_back({spec.name, MetricSource::Registry, spec.name, Maybe{std::nullopt, u->second}});
      continue;
    }
    const V v = spec.get(r);
    out.push_back({spec.name, MetricSource::Registry, spec.name, Maybe{v, v ? "" : registry_reason(r, spec)}});
  }
  for (const auto& [name, m] : r.curve) out.push_back({name, MetricSource::Curve, name, m});
  for (const auto& [name, m] : r.workload_metrics)
    out.push_back({workload_metric(name), MetricSource::Workload, name, m});
  for (const auto& [name, m] : r.perf) out.push_back({kPerfPrefix + name, MetricSource::Perf, name, m});
  return out;
}

std::optional<double> metric_value(const RunRecord& r, const std::string& metric) {
  for (const auto& m : run_metrics(r))
    if (m.name == metric) return m.value.value;
  return std::nullopt;
}

std::optional<double> metric_above(const RunRecord& r, const std::string& metric) {
  for (const auto& m : run_metrics(r))
    if (m.name == metric) return m.value.value ? std::nullopt : m.value.above;
  return std::nullopt;
}

std::string metric_reason(const RunRecord& r, const std::string& metric) {
  for (const auto& m : run_metrics(r))
    if (m.name == metric) return m.value.reason;
  if (workload_metric_name(metric) || has_prefix(metric, kPerfPrefix)) return "not reported";
  return r.samples.empty() ? kNoSampleReason : "";
}

const DeclaredMetric* find_declared(const DeclaredMetrics& declared, const std::string& workload,
                                    const std::string& metric) {
  const auto name = workload_metric_name(metric);
  const auto w = declared.find(workload);
  if (!name || w == declared.end()) return nullptr;
  const auto d = w->second.find(*name);
  return d == w->second.end() ? nullptr : &d->second;
}

MetricInfo metric_info(const std::string& metric, const std::string& workload, const DeclaredMetrics& declared) {
  if (const MetricSpec* s = find_metric(metric)) return {s->unit, s->better, s->about, scope_name(s->scope)};
  if (has_prefix(metric, kPerfPrefix)) return {"count", "none", "perf counter of the process and its descendants", "run"};
  if (const DeclaredMetric* d = find_declared(declared, workload, metric))
    return {d->unit, d->better.empty() ? "none" : d->better, d->about, "run"};
  if (workload_metric_name(metric)) return {"", "none", "reported by the workload", "run"};
  return {};
}

namespace {

Json manifest_entry(const std::string& unit, const std::string& better, double threshold, double min_delta,
                    const std::string& scope, const std::string& about) {
  const DisplayUnit d = display_unit(unit);
  return Json{{"unit", unit},      {"display_unit", d.unit}, {"display_scale", d.scale}, {"better", better},
              {"threshold", threshold}, {"min_delta", min_delta}, {"scope", scope},     {"about", about}};
}

}  // namespace

Json metric_manifest(const std::vector<RunRecord>& runs, const DeclaredMetrics& declared) {
  Json out = Json::object();
  for (const auto& m : metric_registry()) {
    out[m.name] = manifest_entry(m.unit, m.better, m.threshold, m.min_delta, scope_name(m.scope), m.about);
    if (*m.title) out[m.name]["title"] = m.title;
  }
  // The sampled columns too, so that a plot of one reads its unit here as well.
  for (const auto& c : sample_columns()) {
    const std::string name = std::string("samples.") + c.name;
    out[name] = manifest_entry(c.unit, "none", 0, 0, "sample", std::string("sampled column: ") + c.title);
    out[name]["title"] = c.title;
  }
  // Workload metrics: the declaration of the first workload that has one of the name.
  for (const auto& [workload, metrics] : declared)
    for (const auto& [name, d] : metrics)
      if (!out.contains(workload_metric(name)))
        out[workload_metric(name)] =
            manifest_entry(d.unit, d.better.empty() ? "none" : d.better, 0.05, 0, "run", d.about);
  std::set<std::string> perf;
  for (const auto& r : runs)
    for (const auto& [name, v] : r.perf) perf.insert(name);
  for (const auto& name : perf)
    out[kPerfPrefix + name] = manifest_entry("count", "none", 0.05, 0, "run", "perf counter of the process and its descendants");
  return out;
}

DeclaredMetrics declared_from_manifest(const Json& manifest, const std::vector<RunRecord>& runs) {
  DeclaredMetrics out;
  if (!manifest.is_object()) return out;
  for (const auto& r : runs)
    for (const auto& [name, v] : r.workload_metrics)
      if (auto it = manifest.find(workload_metric(name)); it != manifest.end() && it->is_object())
        out[r.workload][name] = {it->value("unit", ""), it->value("better", "none"), it->value("about", "")};
  return out;
}

}  // namespace mh
