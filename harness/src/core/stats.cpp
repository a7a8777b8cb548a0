// Statistics (see stats.h).
#include "core/stats.h"

#include <algorithm>

namespace mh::stats {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  double lower = *std::max_element(v.begin(), v.begin() + static_cast<long>(mid));
  return (lower + upper) / 2;
}

std::optional<Summary> summarize(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return Summary{median(v), *lo, *hi, v.size()};
}

}  // namespace mh::stats
