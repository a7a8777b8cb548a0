// Statistics: pure functions over samples of one metric. No state, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
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

// The percentile bootstrap interval of median(x) / median(reference), each
// side resampled with replacement `resamples` times; deterministic for a
// seed. nullopt when a side has fewer than two values, or a resampled
// reference median is 0.
struct Interval {
  double lo = 0, hi = 0;
};
std::optional<Interval> ratio_of_medians_interval(const std::vector<double>& reference, const std::vector<double>& x,
                                                  double confidence = 0.95, int resamples = 2000, uint64_t seed = 1);

}  // namespace mh::stats
