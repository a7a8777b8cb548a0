// Exports of a Comparison: the JSON record (memharness.comparison/1, canonical),
// the terminal and markdown tables, both derived from one column list, and CSV.
#pragma once

#include <string>

#include "compare/compare.h"

namespace mh {

inline constexpr const char* kComparisonSchema = "memharness.comparison/1";

Json comparison_to_json(const Comparison& c, const Json& context);
// The metrics that have a direction (the JSON has all of them).
std::string comparison_table(const Comparison& c);
std::string comparison_markdown(const Comparison& c);
// Every metric of every workload, one line each, values in the stored unit.
std::string comparison_csv(const Comparison& c);

}  // namespace mh
