// From a report's runs to the store's: the key of each run (workload and
// parameters, pin and revision, machine, harness version) and every metric's
// value as the report has it. Pure functions; any thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "history/store.h"
#include "report/report_json.h"

namespace mh::history {

// "scav@c3b7a36:purge_delay_ms=10" -> {"scav:purge_delay_ms=10", "c3b7a36"};
// a name without a revision -> {name, ""}.
std::pair<std::string, std::string> split_pin(const std::string& allocator);

// The samples a run's trace keeps of `samples`, by index in time order: all
// when there are at most `max_points`, else the first, the last, and of each
// of (max_points - 2) / 2 equal stretches between them the samples of least
// and most RSS, so that the trace keeps the sampled peak and the troughs.
std::vector<size_t> kept_samples(const std::vector<Sample>& samples, size_t max_points);

// A run's trace: its kept samples' RSS and anonymous RSS, and its first
// kMaxTraceMarks marks.
RunTrace trace_of(const RunRecord& r);

// The report's runs, their revision the pin's (fill in or replace it before
// adding: a revision measured in another way, its first-parent position) and
// their machine `machine`, or the report's host when "".
std::vector<StoredRun> stored_runs(const ReportData& report, const std::string& machine);

}  // namespace mh::history
