// The run metrics the harness derives from what a run left in its record (its
// samples and marks, the workload's VmHWM, wait4's figures): computed here,
// once, into the record's fields, which the registry (metrics.cpp) reads. The
// curve metrics are compute_curve's (curve.h). Pure functions of the record;
// any thread.
#pragma once

#include "core/record.h"

namespace mh {

// Once a run is over (runner.cpp): peak_rss_kb and final_rss_kb from the
// samples and marks, hwm_kb and maxrss_kb raised to the phases' peaks where
// the harness reset VmHWM at marks, peak_rss_kb raised to the kernel's figure
// where one is known (peak_from), and derive_anon_peak_and_cpu's.
void derive_run_metrics(RunRecord& rec);

// peak_anon_kb and cpu_ms, which follow from what a report keeps of a run (its
// samples, its CPU times): a run read back from a report gets them here, also
// from a report written before they were stored.
void derive_anon_peak_and_cpu(RunRecord& rec);

}  // namespace mh
