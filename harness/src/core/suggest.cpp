// Spelling suggestions for the command line (see suggest.h).
#include "core/suggest.h"

#include <algorithm>
#include <numeric>

namespace mh {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: the one before last for swaps.
  std::vector<size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
  std::iota(last.begin(), last.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
    }
    before.swap(last);
    last.swap(row);
  }
  return last[b.size()];
}

std::string closest_choice(std::string_view word, const std::vector<std::string>& choices) {
  std::string best;
  size_t best_distance = 3;  // at most 2 edits
  for (const auto& c : choices) {
    const size_t d = edit_distance(word, c);
    if (d < best_distance && 2 * d < word.size()) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& choices) {
  const std::string c = closest_choice(word, choices);
  return c.empty() ? "" : " (did you mean " + c + "?)";
}

}  // namespace mh
