// Display units and the number rule of tables (see units.h).
#include "core/units.h"

#include <fmt/format.h>

#include <cmath>

namespace mh {

DisplayUnit display_unit(const std::string& stored_unit) {
  if (stored_unit == "KiB") return {"MB", 1024.0 / 1e6};
  if (stored_unit == "bytes") return {"MB", 1e-6};
  if (stored_unit == "count" || stored_unit == "bool") return {"", 1};
  return {stored_unit, 1};
}

std::string display_number(double stored_value, const DisplayUnit& unit) {
  const double v = stored_value * unit.scale;
  if (unit.unit == "MB") return fmt::format("{:.1f}", v);
  // 999.5 and up would round to "1e+03" at three significant digits.
  if (std::fabs(v) >= 999.5 || v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

}  // namespace mh
