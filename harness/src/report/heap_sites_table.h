// The live heap's call sites at the peak, as the terminal shows them under
// the summary table of a run with --heap-sample: per workload and allocator,
// the first ok run's heaviest sites, each as its estimated size with the
// standard error and the innermost frame outside the allocator with one or two
// callers. Pure functions; any thread.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"

namespace mh {

// "" when no run has call sites (a run without --heap-sample).
std::string heap_sites_table(const std::vector<RunRecord>& runs, size_t top = 10);

}  // namespace mh
