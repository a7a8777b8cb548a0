// Statistics: pure functions over samples of one metric. No state, no I/O.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace mh::stats {

struct Summary {
  double median = 0, min = 0, max = 0;
  size_t n = 0;
};

// Median of the values (mean of the two middle ones for an even count); 0 when empty.
double median(std::vector<double> v);
// nullopt when empty.
std::optional<Summary> summarize(const std::vector<double>& v);

}  // namespace mh::stats
