// Exports of a Comparison: the JSON record (memharness.comparison/1, canonical),
// the terminal and markdown tables, both derived from one column list, and CSV.
#pragma once

#include <string>

#include "compare/compare.h"

namespace mh {

inline constexpr const char* kComparisonSchema = "memharness.comparison/1";

// The headline, one line: the verdict (REGRESSION, no regression or
// INCOMPLETE with why), the gated regressions by name with change and p, the
// counts of the other gated and of the reported metrics, and what was compared.
// The terminal table and the markdown open with it; the JSON's "summary".
std::string comparison_summary(const Comparison& c);

Json comparison_to_json(const Comparison& c, const Json& context);
// The metrics that have a direction (the JSON has all of them).
std::string comparison_table(const Comparison& c);
std::string comparison_markdown(const Comparison& c);
// Every metric of every workload, one line each, values in the stored unit.
std::string comparison_csv(const Comparison& c);

}  // namespace mh
