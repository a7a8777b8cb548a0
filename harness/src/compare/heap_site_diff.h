// The call sites of the live heap at the peak whose size differs between the
// baseline and the candidate (runs with --heap-sample on both sides): sites
// are matched by the names of their frames outside the allocator (functions
// where known, so that two builds of one program match), each side is the
// mean over its ok runs of the site's estimated bytes with the standard error
// of that mean (the rounds sample independently), and a site is kept when the
// means differ by more than three combined standard errors,
// sqrt(se_a^2 + se_b^2). Pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"

namespace mh {

struct SiteChange {
  std::string workload;
  std::string site;   // the frames' names, innermost first, ';' between
  std::string label;  // the innermost frame and two callers, for a terminal
  double baseline_bytes = 0, baseline_stderr = 0, candidate_bytes = 0, candidate_stderr = 0;
  int baseline_runs = 0, candidate_runs = 0;
};

// The changed sites of each workload, largest absolute change first, at most
// `top` a workload; none when either side has no sites.
std::vector<SiteChange> heap_site_changes(const std::vector<RunRecord>& runs, size_t top = 10);
Json heap_site_changes_json(const std::vector<SiteChange>& changes);
// "" when there are none.
std::string heap_site_changes_table(const std::vector<SiteChange>& changes);
// The same as a markdown section for the comparison's markdown (the pull-request
// comment); "" when there are none.
std::string heap_site_changes_markdown(const std::vector<SiteChange>& changes);

}  // namespace mh
