// How a stored value is shown: its display unit (one convention everywhere:
// tables, markdown, CSV, plots) and the one rule for a number in a table cell,
// which the run summary and the comparison share. Pure functions; any thread.
#pragma once

#include <string>

namespace mh {

// Memory in MB = 10^6 bytes, areas in MB*s, the rest as stored.
struct DisplayUnit {
  std::string unit;  // "MB", "MB*s", "ms", ... ("" for a plain count)
  double scale;      // multiply the stored value by this
};
DisplayUnit display_unit(const std::string& stored_unit);
inline constexpr const char* kUnitConvention = "MB = 10^6 bytes";
// KiB, as /proc and the records count memory, to MB.
inline constexpr double kMbPerKb = 1024.0 / 1e6;

// A stored value in its display unit, as a table cell shows it: three
// significant digits (cells.h: "5.50", "0.438", "16.1", "17100").
std::string display_number(double stored_value, const DisplayUnit& unit);

}  // namespace mh
