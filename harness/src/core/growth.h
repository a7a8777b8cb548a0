// Growth of a sampled series: the Theil-Sen slope with its 95% interval and
// the Mann-Kendall trend test, the serial correlation of a series sampled
// every few milliseconds accounted for by block sub-sampling (the test runs on
// the means of blocks as long as the series' correlation). Pure functions;
// any thread.
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

// Block sub-sampling: a block is kBlockFactor times the first lag at which
// the autocorrelation of the detrended series falls below 2/sqrt(n) (white
// noise's band), or one point when lag 1 already does; never so long that
// fewer than kMinBlocks blocks remain. The factor: block means of an AR(1)
// series stay correlated at about (lag's correlation time)/(block length),
// and a block only as long as the first lag inside the band leaves them
// correlated enough to call a flat series growing in 6-8% of series (see
// docs/leak-or-allocator.md).
inline constexpr double kBlockFactor = 3;
inline constexpr size_t kMinBlocks = 10;

// The autocorrelation of a series at lag k (0 when it is constant).
double autocorrelation(const std::vector<double>& x, size_t k);

// The first lag (from 1) at which the autocorrelation of `detrended` falls
// below 2/sqrt(n); n when it never does.
size_t first_uncorrelated_lag(const std::vector<double>& detrended);

// The block length, in points, for a series of that first lag and n points.
size_t block_length(size_t first_lag, size_t n);

struct Trend {
  size_t n = 0;           // points, after downsampling
  double lag1 = 0;        // the detrended series' autocorrelation at lag 1
  size_t first_lag = 1;   // the first lag inside white noise's band
  size_t block = 1;       // points per block
  size_t blocks = 0;      // the block means tested
  double slope = 0;       // Theil-Sen of the block means, value per time
  double lo = 0, hi = 0;  // its 95% interval: Sen's order statistics of the pairwise slopes, from var_s
  double s = 0;           // Mann-Kendall's S of the block means
  double var_s = 0;       // its variance, ties counted
  double z = 0;           // S over its standard deviation, continuity-corrected
  double p = 1;           // two-sided
};

// The trend of a series (at least 3 points; any order: sorted by time here),
// downsampled to kMaxPoints first, then tested on its block means.
Trend trend(std::vector<Point> points);

// A trend is growth when Mann-Kendall's p is below kAlpha and the slope's
// interval lies above 0; a fall, likewise below 0.
inline constexpr double kAlpha = 0.05;
enum class Direction { Flat, Growing, Falling };
Direction direction(const Trend& t);

}  // namespace mh::growth
