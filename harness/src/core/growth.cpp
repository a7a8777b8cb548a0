// Theil-Sen, Mann-Kendall and Hamed-Rao (see growth.h).
//
// Why Hamed-Rao and not block sub-sampling: a sampled memory series is
// autocorrelated at many lags (a cache fills over seconds, a sampler reads
// every 10 ms), and block sub-sampling needs a block length read off the
// autocorrelation function, then throws away all but one point per block, so
// a run of a minute keeps a few dozen points. Hamed-Rao keeps every point and
// widens the variance of S by the correlation it finds, at every lag that
// stands out of white noise's band; the same widened variance gives Sen's
// interval for the slope, so the test and the interval agree.
#include "core/growth.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mh::growth {

namespace {

constexpr double kZ95 = 1.959963984540054;  // the normal quantile of 0.975

void by_time(std::vector<Point>& points) {
  std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.t < b.t; });
}

// The slopes of every pair with different times.
std::vector<double> pairwise_slopes(const std::vector<Point>& p) {
  std::vector<double> out;
  out.reserve(p.size() * (p.size() - (p.empty() ? 0 : 1)) / 2);
  for (size_t i = 0; i < p.size(); ++i)
    for (size_t j = i + 1; j < p.size(); ++j)
      if (p[j].t != p[i].t) out.push_back((p[j].v - p[i].v) / (p[j].t - p[i].t));
  return out;
}

// The k-th smallest (0-based) of v, clamped to its range; v is reordered.
double kth(std::vector<double>& v, double k) {
  const auto i = static_cast<size_t>(std::clamp(k, 0.0, double(v.size() - 1)));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

double median_of(std::vector<double>& v) {
  const size_t n = v.size();
  if (n % 2 == 1) return kth(v, double(n / 2));
  const double hi = kth(v, double(n / 2));
  return (kth(v, double(n / 2 - 1)) + hi) / 2;
}

// Ranks 1..n, tied values sharing their mean rank.
std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[order[k]] = (double(i + j) / 2) + 1;
    i = j + 1;
  }
  return r;
}

// Mann-Kendall's S of the values in time order, and its variance under
// independence with ties counted: n(n-1)(2n+5)/18 less the same of each tie group.
void mann_kendall(const std::vector<Point>& p, Trend& out) {
  const size_t n = p.size();
  double s = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) s += (p[j].v > p[i].v) - (p[j].v < p[i].v);
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = p[i].v;
  std::sort(v.begin(), v.end());
  auto term = [](double m) { return m * (m - 1) * (2 * m + 5); };
  double var = term(double(n));
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && v[j] == v[i]) ++j;
    var -= term(double(j - i));
    i = j;
  }
  out.s = s;
  out.var_s = var / 18;
}

}  // namespace

std::vector<Point> downsample(std::vector<Point> points, size_t max_points) {
  by_time(points);
  if (max_points == 0 || points.size() <= max_points) return points;
  std::vector<Point> out;
  out.reserve(max_points);
  const size_t n = points.size();
  for (size_t b = 0; b < max_points; ++b) {
    const size_t from = b * n / max_points, to = (b + 1) * n / max_points;
    Point sum;
    for (size_t i = from; i < to; ++i) sum.t += points[i].t, sum.v += points[i].v;
    out.push_back({sum.t / double(to - from), sum.v / double(to - from)});
  }
  return out;
}

double theil_sen_slope(const std::vector<Point>& points) {
  std::vector<Point> p = points;
  by_time(p);
  std::vector<double> slopes = pairwise_slopes(p);
  return slopes.empty() ? 0 : median_of(slopes);
}

double hamed_rao_factor(const std::vector<double>& detrended) {
  const size_t n = detrended.size();
  if (n < 3) return 1;
  const std::vector<double> r = ranks(detrended);
  const double mean = double(n + 1) / 2;
  double denom = 0;
  for (double x : r) denom += (x - mean) * (x - mean);
  if (denom <= 0) return 1;  // every value the same: nothing is correlated
  const double band = kZ95 / std::sqrt(double(n)), dn = double(n);
  double sum = 0;
  for (size_t k = 1; k < n; ++k) {
    double num = 0;
    for (size_t i = 0; i + k < n; ++i) num += (r[i] - mean) * (r[i + k] - mean);
    const double rho = num / denom;
    if (std::fabs(rho) <= band) continue;
    const double m = dn - double(k);
    sum += m * (m - 1) * (m - 2) * rho;
  }
  return std::max(1.0, 1 + 2 * sum / (dn * (dn - 1) * (dn - 2)));
}

Trend trend(std::vector<Point> points) {
  std::vector<Point> p = downsample(std::move(points));
  Trend out;
  out.n = p.size();
  if (p.size() < 3) return out;
  std::vector<double> slopes = pairwise_slopes(p);
  if (slopes.empty()) return out;
  out.slope = median_of(slopes);
  mann_kendall(p, out);
  std::vector<double> detrended(p.size());
  for (size_t i = 0; i < p.size(); ++i) detrended[i] = p[i].v - out.slope * p[i].t;
  out.var_factor = hamed_rao_factor(detrended);
  out.var_s *= out.var_factor;
  const double sd = std::sqrt(std::max(0.0, out.var_s));
  if (sd > 0) {
    out.z = out.s > 0 ? (out.s - 1) / sd : out.s < 0 ? (out.s + 1) / sd : 0;
    out.p = std::min(1.0, std::erfc(std::fabs(out.z) / std::sqrt(2.0)));
  }
  // Sen (1968): the interval runs from the M1-th to the (M2+1)-th smallest
  // slope (1-based), M1 = (N - C)/2, M2 = (N + C)/2, C = z * sd(S).
  const double big_n = double(slopes.size()), c = kZ95 * sd;
  out.lo = kth(slopes, std::floor((big_n - c) / 2) - 1);
  out.hi = kth(slopes, std::ceil((big_n + c) / 2));
  return out;
}

Direction direction(const Trend& t) {
  if (t.p >= kAlpha) return Direction::Flat;
  if (t.lo > 0) return Direction::Growing;
  if (t.hi < 0) return Direction::Falling;
  return Direction::Flat;
}

}  // namespace mh::growth
