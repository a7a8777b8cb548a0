// The number rule of every table (see cells.h). Pure functions.
#include "core/cells.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/stats.h"

namespace mh {

namespace {

// Decimals that give `like` three significant digits (none for 100 and up,
// at most 6), and the step the digits of larger numbers round to (10 for
// 1000-9999: "17100").
struct Precision {
  int decimals = 0;
  double step = 1;
};
Precision digits_of(double like) {
  const double a = std::fabs(like);
  if (a == 0 || !std::isfinite(a)) return {};
  const int exponent = int(std::floor(std::log10(a)));
  if (exponent >= 2) return {0, std::pow(10.0, exponent - 2)};
  const int decimals = std::min(6, 2 - exponent);
  return {decimals, std::pow(10.0, -decimals)};
}

// 9.996 rounds to 10.0: a number's precision is that of what it rounds to.
Precision precision_of(double like) {
  const Precision p = digits_of(like);
  return digits_of(std::round(like / p.step) * p.step);
}

}  // namespace

std::string number_text(double v, double like) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
  const Precision p = precision_of(like);
  double r = std::round(v / p.step) * p.step;
  if (r == 0) r = 0;  // no "-0.00"
  return fmt::format("{:.{}f}", r, p.decimals);
}

std::string number_text(double v) { return number_text(v, v); }

std::optional<CellFigures> cell_figures(const std::vector<double>& values, const std::vector<double>& bounds) {
  if (values.empty() && bounds.empty()) return std::nullopt;
  std::vector<double> all = values, ranked = values;
  all.insert(all.end(), bounds.begin(), bounds.end());
  ranked.insert(ranked.end(), bounds.size(), std::numeric_limits<double>::infinity());
  CellFigures f;
  f.n = all.size();
  f.never = bounds.size();
  f.min = *std::min_element(all.begin(), all.end());
  f.max = *std::max_element(all.begin(), all.end());
  const double m = stats::median(ranked);
  f.median_never = std::isinf(m);
  f.median = f.median_never ? stats::median(bounds) : m;
  return f;
}

std::string figures_cell(const CellFigures& f, const DisplayUnit& unit) {
  const double median = f.median * unit.scale, lo = f.min * unit.scale, hi = f.max * unit.scale;
  const double like = median != 0 ? median : std::max(std::fabs(lo), std::fabs(hi));
  auto num = [&](double v) { return number_text(v, like); };
  const std::string u = unit.unit.empty() ? "" : " " + unit.unit;
  if (f.median_never)
    return f.never == f.n ? fmt::format("> {}{} (never)", num(median), u)
                          : fmt::format("> {}{} ({} of {} never)", num(median), u, f.never, f.n);
  if (f.n == 1) return num(median);
  return fmt::format("{} ({}-{}{})", num(median), num(lo), num(hi),
                     f.never ? fmt::format(", {} never", f.never) : std::string());
}

std::string ratio_cell(const RatioFigures& r) {
  if (r.both_never) return "never";
  if (r.above) return "> " + number_text(r.ratio);
  if (r.below) return "< " + number_text(r.ratio);
  if (!r.lo || !r.hi) return number_text(r.ratio);
  return fmt::format("{} ({}-{})", number_text(r.ratio), number_text(*r.lo, r.ratio), number_text(*r.hi, r.ratio));
}

}  // namespace mh
