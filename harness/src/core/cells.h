// The one rule for a number in a table cell, used by the run table, its
// markdown and CSV, `harness show` and the comparison: three significant
// digits, one precision within a cell, a range always as median (min-max), a
// time that never came as "> T ms (never)". Pure functions; any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/units.h"

namespace mh {

// A number to three significant digits (trailing zeros kept: they are
// digits): 0.438, 5.30, 31.2, 412, 17100. `like` sets the precision instead
// (the median of a cell, so that its min and max share its digits).
std::string number_text(double v);
std::string number_text(double v, double like);

// One metric's figures over the runs of a row: median, min and max of the
// runs' figures, a run whose figure never came (a time right-censored at the
// run's end, Maybe::above) counted at its bound.
struct CellFigures {
  double median = 0, min = 0, max = 0;
  size_t n = 0;               // runs with a figure or a bound
  size_t never = 0;           // of them, the runs whose figure never came
  bool median_never = false;  // the median falls on such a run: it is more than `median`
};
// Counted as longer than every observed value, a run that never came can only
// move the median up; when the median lands on one it is the median of the
// bounds, a lower bound. nullopt when both are empty.
std::optional<CellFigures> cell_figures(const std::vector<double>& values, const std::vector<double>& bounds);

// "31.2 (17.5-31.6)"; one run: "31.2"; every run never: "> 3000 ms (never)";
// the median never but not every run: "> 3000 ms (2 of 3 never)"; some runs
// never: "120 (119-3000, 1 never)", the range of the figures with the bounds.
// In the unit's display unit; the unit is said after a bound, which is no
// figure of the column.
std::string figures_cell(const CellFigures& f, const DisplayUnit& unit);

// A ratio to the reference row and its interval: "1.00", "0.112 (0.105-0.120)";
// "> 2.10" or "< 0.48" when one side's median never came, "never" when both.
struct RatioFigures {
  double ratio = 1;
  std::optional<double> lo, hi;  // the interval, when there are runs enough
  bool above = false, below = false, both_never = false;
};
std::string ratio_cell(const RatioFigures& r);

}  // namespace mh
