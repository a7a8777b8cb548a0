// The workload registry: the workload binaries installed beside the harness,
// each describing its own parameters (--describe) and validating a command line
// (--check). The harness never links workload code.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "core/record.h"

namespace mh {

struct WorkloadInfo {
  std::string name, binary;
  Json description;  // name, summary, seed, params[]
};

// Every workload binary in `dir`, described, sorted by name.
std::vector<WorkloadInfo> list_workloads(const std::string& dir);
std::optional<WorkloadInfo> find_workload(const std::string& dir, const std::string& name);

// Validates args with the workload's own declaration. Returns the resolved
// parameters, or nullopt with the workload's message in error.
std::optional<Json> check_params(const WorkloadInfo& w, const std::vector<std::string>& args, std::string& error);

// The names of the metrics the workload declares.
std::vector<std::string> declared_metrics(const WorkloadInfo& w);
// Its declared metrics with unit, direction and description.
std::map<std::string, DeclaredMetric> declared_metric_specs(const WorkloadInfo& w);
// The mark after which it idles or settles ("" when it declares none): the
// default of --after.
std::string declared_after_mark(const WorkloadInfo& w);

// The metrics it declares as its headline figures (Headline, metrics.h), in
// the order it declares them: its own metrics with a "column", then the
// harness's curve metrics it names (curve_columns).
std::vector<Headline> headline_metrics(const WorkloadInfo& w);

// The metrics (patterns) that gate a comparison of it by default: its headline
// figures and what its declaration's "gate" names, else default_gated_metrics().
std::vector<std::string> gated_metrics(const WorkloadInfo& w);

// One line per workload and one per parameter, for --list.
std::string format_list(const std::vector<WorkloadInfo>& workloads);

}  // namespace mh
