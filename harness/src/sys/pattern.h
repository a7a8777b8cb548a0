// Regular expressions matched against a program's output (--ready,
// --mark-on-output, --load-metric): POSIX extended syntax, leftmost-longest
// matches, in time linear in the line whatever the pattern (RE2: no
// backtracking, so no back-references). Immutable once compiled; any thread.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace re2 {
class RE2;
}

namespace mh {

class Pattern {
 public:
  // nullopt with RE2's reason when `text` is not a pattern it takes.
  static std::optional<Pattern> compile(const std::string& text, std::string& error);
  // Does some part of `line` match?
  bool found_in(const std::string& line) const;
  // The first capture group of the first match in `line` (nullopt: no match).
  std::optional<std::string> first_group(const std::string& line) const;
  // How many capture groups the pattern has.
  int groups() const;
  const std::string& text() const;

 private:
  explicit Pattern(std::shared_ptr<const re2::RE2> re);
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace mh
