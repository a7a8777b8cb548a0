// A report as Chrome trace event JSON (the format Perfetto's UI and
// chrome://tracing open): one process per run, its sampled memory as counter
// tracks, its marks as instant events. A pure function of the record.
#pragma once

#include <string>

#include "report/report_json.h"

namespace mh {

// The trace of every run of `report`: a top-level {"traceEvents": [...]}; per
// run a process (pid = its place in the report, from 1) named "WORKLOAD
// ALLOCATOR run N", counters (ph "C", ts in microseconds since the child
// started) for RSS, anonymous RSS and the live heap (when the ledger ran) in
// MB and the minor and major faults so far, and each mark as a process-wide
// instant event (ph "i", s "p").
std::string chrome_trace(const ReportData& report);

}  // namespace mh
