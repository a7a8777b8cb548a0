// Display units and the number rule of tables (see units.h).
#include "core/units.h"

#include "core/cells.h"

namespace mh {

DisplayUnit display_unit(const std::string& stored_unit) {
  if (stored_unit == "KiB") return {"MB", 1024.0 / 1e6};
  if (stored_unit == "bytes") return {"MB", 1e-6};
  if (stored_unit == "count" || stored_unit == "bool") return {"", 1};
  return {stored_unit, 1};
}

std::string display_number(double stored_value, const DisplayUnit& unit) {
  return number_text(stored_value * unit.scale);
}

}  // namespace mh
