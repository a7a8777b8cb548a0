// Adding runs to the history store: the one path `harness history add` and
// --history on run, compare, bisect and sweep share. Each run's revision is
// resolved here (git, pins), since the store's layer knows neither. Main thread.
#pragma once

#include <optional>
#include <string>

#include "history/target.h"
#include "report/report_json.h"

namespace mh {

// Adds the report's runs to target.file under target's labels; how many were
// new, or nullopt with a message naming the store.
std::optional<size_t> add_to_history(const history::Target& target, const ReportData& report, std::string& error);

}  // namespace mh
