// "Did you mean ...?": the choice closest to a mistyped word, by edit distance.
// Pure functions; any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mh {

// The number of single-character insertions, deletions, substitutions and
// swaps of two neighbours that turn a into b (optimal string alignment).
size_t edit_distance(std::string_view a, std::string_view b);

// The choice nearest to `word` when it is near enough to be a typo: at most 2
// edits, and fewer than half of the word's length; "" when none is (the first
// of equally near choices wins).
std::string closest_choice(std::string_view word, const std::vector<std::string>& choices);

// " (did you mean X?)" for closest_choice, or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& choices);

}  // namespace mh
