// The pure parts of `harness sweep` (sweep_command.cpp): a grid's points and
// the Pareto front of two metrics.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mh {

// FAMILY:a=1|2,b=x|y,c=z -> FAMILY:a=1,b=x,c=z, FAMILY:a=1,b=y,c=z, ... (the
// first varied option slowest); one or two options may vary. nullopt with a
// message naming the bad part otherwise.
std::optional<std::vector<std::string>> expand_grid(const std::string& grid, std::string& error);

// Which points (x, y) no other point beats on both: at least as good on each
// and better on one, "better" being higher where the flag says so, else lower.
std::vector<bool> pareto_front(const std::vector<std::pair<double, double>>& points, bool x_higher, bool y_higher);

}  // namespace mh
