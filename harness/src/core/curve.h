// Metrics of the RSS curve, computed by the harness from a run's samples and
// marks for every workload and every command (none of them by the workload):
// the area under RSS over the run, per phase the area, peak and minor faults,
// and after one mark the RSS a fixed time later and how soon the memory above
// the start is given back. Their names, units and rules are in the registry
// (metrics.cpp). Pure functions of the record; any thread.
#pragma once

#include <string>

#include "core/record.h"

namespace mh {

// The most phases a run is split into; marks past that end the last phase.
inline constexpr size_t kMaxPhases = 32;

// Readings taken this long after the --after mark: after.rss_100ms_kb and so on.
struct AfterOffset {
  const char* suffix;  // "100ms", "1s", "10s"
  double ms;
};
inline constexpr AfterOffset kAfterOffsets[] = {{"100ms", 100}, {"1s", 1000}, {"10s", 10000}};

// Which mark the after.* metrics are measured from: `asked` (--after) when
// given, else `declared` (the workload's idle mark), else the run's last mark.
// Fills rec.curve and rec.curve_info.
void compute_curve(RunRecord& rec, const std::string& asked, const std::string& declared);

// The phase names of a run, in order: "launch" (start to the first mark), then
// each mark's name, a repeated one numbered ("turn", "turn#2", ...).
std::vector<std::string> phase_names(const std::vector<Mark>& marks);

}  // namespace mh
