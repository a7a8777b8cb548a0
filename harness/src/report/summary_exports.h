// The run summary written to files: the same table as markdown, and every
// metric of the summary as CSV. Pure functions; any thread.
#pragma once

#include <string>
#include <vector>

#include "core/metrics.h"
#include "core/record.h"
#include "report/summary_table.h"

namespace mh {

// The summary table as markdown (a table per workload, the notes as a list).
// Every column, the ratio to `reference` ("": the first allocator of the runs).
std::string summary_markdown(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines = {},
                             const std::string& reference = "");
// Every metric of the summary, one line per workload, allocator, role and
// metric, values in the stored unit (named in the unit column).
std::string summary_csv(const std::vector<RunRecord>& runs, const DeclaredMetrics& declared = {});

}  // namespace mh
