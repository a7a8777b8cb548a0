// Patterns over program output by RE2 (see pattern.h).
#include "sys/pattern.h"

#include <re2/re2.h>

namespace mh {

namespace {

RE2::Options posix_options() {
  RE2::Options o;
  o.set_posix_syntax(true);   // POSIX extended: no \d, no (?:...), as the README says
  o.set_longest_match(true);  // leftmost-longest, as POSIX regexec
  o.set_log_errors(false);    // the error goes to the caller, not to stderr
  o.set_max_mem(64 << 20);    // a pattern whose automaton is larger is refused, not slow
  return o;
}

}  // namespace

Pattern::Pattern(std::shared_ptr<const re2::RE2> re) : re_(std::move(re)) {}

std::optional<Pattern> Pattern::compile(const std::string& text, std::string& error) {
  auto re = std::make_shared<const RE2>(text, posix_options());
  if (!re->ok()) {
    error = re->error();
    return std::nullopt;
  }
  return Pattern(std::move(re));
}

bool Pattern::found_in(const std::string& line) const { return RE2::PartialMatch(line, *re_); }

std::optional<std::string> Pattern::first_group(const std::string& line) const {
  std::string group;
  if (groups() < 1 || !RE2::PartialMatch(line, *re_, &group)) return std::nullopt;
  return group;
}

int Pattern::groups() const { return re_->NumberOfCapturingGroups(); }

const std::string& Pattern::text() const { return re_->pattern(); }

}  // namespace mh
