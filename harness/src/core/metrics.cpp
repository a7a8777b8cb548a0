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
      {"peak_rss_kb", "KiB", "lower", 0.03, 1024, "largest RSS of any sample", kRun, "peak RSS",
       [](R r) -> V { return r.samples.empty() ? V() : V(double(r.peak_rss_kb)); }, [](W r, double v) { r.peak_rss_kb = int64_t(v); }},
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
  };
  return registry;
}

const MetricSpec* find_metric(const std::string& metric) {
  for (const auto& m : metric_registry())
    if (fnmatch(m.name, metric.c_str(), 0) == 0) return &m;
  return nullptr;
}

std::optional<double> metric_value(const RunRecord& r, const std::string& metric) {
  auto from = [](const std::map<std::string, Maybe>& values, const std::string& key) -> V {
    auto it = values.find(key);
    return it == values.end() ? V() : it->second.value;
  };
  if (metric.rfind("workload.", 0) == 0) return from(r.workload_metrics, metric.substr(9));
  if (metric.rfind("perf.", 0) == 0) return from(r.perf, metric.substr(5));
  const MetricSpec* spec = find_metric(metric);
  if (!spec) return std::nullopt;
  if (spec->get) return spec->get(r);
  for (const auto& [name, m] : r.curve)
    if (name == metric) return m.value;
  return std::nullopt;
}

std::string metric_reason(const RunRecord& r, const std::string& metric) {
  auto from = [](const std::map<std::string, Maybe>& values, const std::string& key) {
    auto it = values.find(key);
    return it == values.end() ? std::string("not reported") : it->second.reason;
  };
  if (metric.rfind("workload.", 0) == 0) return from(r.workload_metrics, metric.substr(9));
  if (metric.rfind("perf.", 0) == 0) return from(r.perf, metric.substr(5));
  for (const auto& [name, m] : r.curve)
    if (name == metric) return m.reason;
  if (metric == "hwm_kb") return r.hwm_kb.reason;
  return r.samples.empty() ? "no sample of the process could be read" : "";
}

DisplayUnit display_unit(const std::string& stored_unit) {
  if (stored_unit == "KiB") return {"MB", 1024.0 / 1e6};
  if (stored_unit == "bytes") return {"MB", 1e-6};
  if (stored_unit == "count" || stored_unit == "bool") return {"", 1};
  return {stored_unit, 1};
}

MetricInfo metric_info(const std::string& metric, const std::string& workload, const DeclaredMetrics& declared) {
  if (const MetricSpec* s = find_metric(metric)) return {s->unit, s->better, s->about, scope_name(s->scope)};
  if (metric.rfind("perf.", 0) == 0) return {"count", "none", "perf counter of the process and its descendants", "run"};
  if (metric.rfind("workload.", 0) == 0) {
    if (auto w = declared.find(workload); w != declared.end())
      if (auto d = w->second.find(metric.substr(9)); d != w->second.end())
        return {d->second.unit, d->second.better.empty() ? "none" : d->second.better, d->second.about, "run"};
    return {"", "none", "reported by the workload", "run"};
  }
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
      if (!out.contains("workload." + name))
        out["workload." + name] =
            manifest_entry(d.unit, d.better.empty() ? "none" : d.better, 0.05, 0, "run", d.about);
  std::set<std::string> perf;
  for (const auto& r : runs)
    for (const auto& [name, v] : r.perf) perf.insert(name);
  for (const auto& name : perf)
    out["perf." + name] = manifest_entry("count", "none", 0.05, 0, "run", "perf counter of the process and its descendants");
  return out;
}

DeclaredMetrics declared_from_manifest(const Json& manifest, const std::vector<RunRecord>& runs) {
  DeclaredMetrics out;
  if (!manifest.is_object()) return out;
  for (const auto& r : runs)
    for (const auto& [name, v] : r.workload_metrics)
      if (auto it = manifest.find("workload." + name); it != manifest.end() && it->is_object())
        out[r.workload][name] = {it->value("unit", ""), it->value("better", "none"), it->value("about", "")};
  return out;
}

}  // namespace mh
