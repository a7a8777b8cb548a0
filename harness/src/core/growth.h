// Growth of a sampled series: the Theil-Sen slope with its 95% interval and
// the Mann-Kendall trend test, the serial correlation of a series sampled
// every few milliseconds accounted for by Hamed and Rao's variance correction.
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <vector>

namespace mh::growth {

// One reading: its time and value, in any units (the slope is value per time).
struct Point {
  double t = 0, v = 0;
};

// The most points a series is tested on: a longer one is averaged in bins of
// consecutive points down to this many first. Theil-Sen and Mann-Kendall look
// at every pair and Hamed-Rao at every lag, so the cost is O(n^2) in this
// bound (500 thousand pairs, a few milliseconds), whatever the run's length.
inline constexpr size_t kMaxPoints = 1000;

// The points in time order, averaged (time and value) in bins of consecutive
// points, as equal in count as they divide, to at most max_points.
std::vector<Point> downsample(std::vector<Point> points, size_t max_points = kMaxPoints);

// The median of the slopes of every pair of points with different times
// (Theil-Sen); 0 with fewer than two different times.
double theil_sen_slope(const std::vector<Point>& points);

// The variance factor n/n* of Hamed and Rao (1998) for Mann-Kendall's S: from
// the autocorrelation of the ranks of the detrended values at every lag,
// counting only lags whose autocorrelation lies outside +-1.96/sqrt(n) (white
// noise's 95% band). Never below 1: a series that reads as negatively
// correlated is not given more confidence than independent points would have.
double hamed_rao_factor(const std::vector<double>& detrended);

struct Trend {
  size_t n = 0;           // points tested, after downsampling
  double slope = 0;       // Theil-Sen, value per time
  double lo = 0, hi = 0;  // its 95% interval: Sen's order statistics of the pairwise slopes, from var_s
  double s = 0;           // Mann-Kendall's S
  double var_s = 0;       // its variance, ties counted, times var_factor
  double var_factor = 1;  // Hamed-Rao's n/n*
  double z = 0;           // S over its standard deviation, continuity-corrected
  double p = 1;           // two-sided
};

// The trend of a series (at least 3 points; any order: sorted by time here),
// downsampled to kMaxPoints first.
Trend trend(std::vector<Point> points);

// A trend is growth when Mann-Kendall's p is below kAlpha and the slope's
// interval lies above 0; a fall, likewise below 0.
inline constexpr double kAlpha = 0.05;
enum class Direction { Flat, Growing, Falling };
Direction direction(const Trend& t);

}  // namespace mh::growth
