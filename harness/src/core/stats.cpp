// Statistics (see stats.h).
#include "core/stats.h"

#include <algorithm>
#include <cmath>

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

namespace {

// splitmix64: small, fast and the same on every platform (std's distributions are not).
uint64_t next_random(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double resampled_median(const std::vector<double>& v, uint64_t& state, std::vector<double>& scratch) {
  scratch.resize(v.size());
  for (auto& s : scratch) s = v[next_random(state) % v.size()];
  return median(scratch);
}

}  // namespace

std::optional<Interval> ratio_of_medians_interval(const std::vector<double>& reference, const std::vector<double>& x,
                                                  double confidence, int resamples, uint64_t seed) {
  if (reference.size() < 2 || x.size() < 2 || resamples < 1) return std::nullopt;
  uint64_t state = seed;
  std::vector<double> ratios, scratch;
  ratios.reserve(size_t(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double ref = resampled_median(reference, state, scratch);
    if (ref == 0) return std::nullopt;
    ratios.push_back(resampled_median(x, state, scratch) / ref);
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - confidence) / 2;
  auto at = [&](double q) { return ratios[std::min(ratios.size() - 1, size_t(std::floor(q * double(ratios.size()))))]; };
  return Interval{at(tail), at(1 - tail)};
}

}  // namespace mh::stats
