// The summary over repetitions: per workload and allocator, per metric (the
// registry's, metrics.h, then the workload's and perf's), median/min/max/n of
// the runs that are ok.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/record.h"
#include "core/stats.h"

namespace mh {

// A metric's figures in the ok runs of a row, and the bounds of the runs
// whose figure never came (a time right-censored at the run's end).
struct MetricRuns {
  std::vector<double> values, above;
};

struct SummaryRow {
  std::string workload, allocator, role;
  size_t runs_ok = 0, runs_total = 0;
  std::vector<std::pair<std::string, stats::Summary>> metrics;  // registry metrics, then workload.*, perf.*
  // Every metric some ok run has a figure or a bound of, in the same order.
  std::vector<std::pair<std::string, MetricRuns>> runs;
  const stats::Summary* find(const std::string& metric) const;
  const MetricRuns* find_runs(const std::string& metric) const;
};

// Rows in order of first appearance of (workload, allocator).
std::vector<SummaryRow> summarize_runs(const std::vector<RunRecord>& runs);

}  // namespace mh
