// The metric registry: every metric the harness computes, declared once, with
// its unit, which way is better, its default comparison rule, a line of
// description and its scope. The summary, the report writer and reader, the
// tables, the markdown and CSV exports, the comparison's defaults and the
// manifest the plots read all derive from this list; ci/thresholds.json keeps
// only overrides. Workloads declare their own metrics (workload.*) the same
// way in their --describe. Pure data and lookups; any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/record.h"
#include "core/units.h"

namespace mh {

// run: one value per run; phase: one per phase between two marks (the name is
// a pattern, "phase.*.area_mb_s", the '*' the phase's name); after: one per run,
// measured from the mark --after names.
enum class MetricScope { Run, Phase, After };
const char* scope_name(MetricScope s);

struct MetricSpec {
  const char* name;    // as in reports; a pattern with '*' for a family
  const char* unit;    // of the stored value: KiB, ms, faults, switches, MB*s
  const char* better;  // lower, higher, none
  double threshold;    // relative change a comparison tolerates
  double min_delta;    // absolute difference of medians that is no change
  const char* about;
  MetricScope scope;
  const char* title;  // column title in the run summary ("" when not a column)
  // The value of a run metric kept in the record's fields; null for the curve
  // metrics, whose values are in RunRecord::curve.
  std::optional<double> (*get)(const RunRecord&);
  // Stores a value read back from a report into the record's field; null for
  // the curve metrics and for peak_anon_kb and cpu_ms, which a run read back
  // derives again (derive_anon_peak_and_cpu, derived_metrics.h).
  void (*set)(RunRecord&, double);
};

// In report order: the run metrics, then the curve metrics.
const std::vector<MetricSpec>& metric_registry();
// The entry that names `metric` (a family's pattern matches its members);
// nullptr for workload.* and perf.* metrics and for unknown names.
const MetricSpec* find_metric(const std::string& metric);

// A metric a workload reports is "workload.NAME" in reports, summaries and
// comparisons, NAME in its record (RunRecord::workload_metrics) and in its
// --describe.
std::string workload_metric(const std::string& name);
// NAME of "workload.NAME"; nullopt for any other metric.
std::optional<std::string> workload_metric_name(const std::string& metric);

// Why a run has no value of a metric it should have: no sample was read.
inline constexpr const char* kNoSampleReason = "no sample of the process could be read";

// One metric of a run as the summary, the report and the lookups below see
// it: its name in reports, where the record keeps it, and its value or null
// with the reason.
enum class MetricSource { Registry, Curve, Workload, Perf };
struct RunMetric {
  std::string name;  // "peak_rss_kb", "after.rss_1s_kb", "workload.NAME", "perf.NAME"
  MetricSource source;
  std::string key;  // the name within its source: NAME for workload.NAME and perf.NAME
  Maybe value;
};
// Every metric of a run, in report order: the registry's run metrics (those
// the record's fields hold), the curve's, the workload's, perf's.
std::vector<RunMetric> run_metrics(const RunRecord& r);

// The value of any metric of a run: a registry metric, "workload.NAME" or
// "perf.NAME"; nullopt when the run has none (or it is null).
std::optional<double> metric_value(const RunRecord& r, const std::string& metric);
// Why a run has no value of `metric` ("" when it has one or no reason is known).
std::string metric_reason(const RunRecord& r, const std::string& metric);
// The bound of a time that never came within the run (Maybe::above): the
// figure is more than it. nullopt when the run has a value, or no bound.
std::optional<double> metric_above(const RunRecord& r, const std::string& metric);

// A metric a workload declares (its --describe "metrics").
struct DeclaredMetric {
  std::string unit, better, about;
};
// By workload name, then by metric name without the "workload." prefix.
using DeclaredMetrics = std::map<std::string, std::map<std::string, DeclaredMetric>>;
// What `workload` declares of "workload.NAME"; nullptr when it declares no
// such metric, or `metric` is not a workload's.
const DeclaredMetric* find_declared(const DeclaredMetrics& declared, const std::string& workload,
                                    const std::string& metric);

// A metric a workload declares as one of its headline figures (its result),
// for the run summary: the first one ranks the allocators. One of its own
// metrics, or one of the harness's curve metrics it names.
struct Headline {
  std::string metric;  // as in the summary: workload_metric("excess_anon_kb"), or "after.rss_1s_kb"
  std::string title, unit, better;
};

// The metrics whose verdict gates a comparison (the others are compared and
// reported) by workload name, as patterns (fnmatch): a workload's headline
// figures and the metrics its declaration says state its purpose ("gate"),
// else default_gated_metrics(). docs/compare.md says why each set is what it is.
using GatedMetrics = std::map<std::string, std::vector<std::string>>;
// A program's, and a workload's that declares none: peak RSS, the area under
// the RSS curve, wall and CPU time.
const std::vector<std::string>& default_gated_metrics();

// The unit and direction of any metric: the registry's, a workload's
// declaration, or perf's (counts, informational). Empty unit when unknown.
struct MetricInfo {
  std::string unit, better, about, scope;
};
MetricInfo metric_info(const std::string& metric, const std::string& workload, const DeclaredMetrics& declared);

// The "metrics" manifest of a report: every registry entry, every declared
// workload metric, the perf counters of `runs` and the sampled columns
// ("samples.rss_kb", scope "sample"), each with unit, display unit and scale,
// direction, default rule, scope and description, and a title where a table
// or plot has one.
Json metric_manifest(const std::vector<RunRecord>& runs, const DeclaredMetrics& declared);
// Declared workload metrics read back from a manifest (a report written by
// metric_manifest), for comparing reports without the workloads at hand.
DeclaredMetrics declared_from_manifest(const Json& manifest, const std::vector<RunRecord>& runs);

}  // namespace mh
