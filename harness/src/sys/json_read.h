// The one reader of every JSON the harness takes in (reports, comparisons,
// thresholds, pins, suites, bisect and sweep state, workload descriptions,
// mark-protocol lines): parsing under a size and a nesting limit, and typed
// accessors that name the JSON path of what they reject. Values only; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/record.h"

namespace mh {

struct JsonLimits {
  size_t max_bytes;
  int max_depth;  // containers inside containers; the top-level value is depth 1
};
// A file: a long suite's report is hundreds of MB. Past 64 levels nothing the
// harness writes goes, and the copies and dumps of the document recurse once
// per level, so a deeper document is refused before it can exhaust the stack.
inline constexpr JsonLimits kFileLimits{size_t(1) << 30, 64};
// One mark-protocol line. Shallower than a file: a message's value lands a few
// levels down in the report (runs[i].data.KEY), which must still read back.
inline constexpr JsonLimits kLineLimits{size_t(1) << 20, 32};

// The largest memory figure a report or a program may give, in KiB (1 PiB):
// well above any machine, well below where a double stops holding integers.
inline constexpr int64_t kMaxKb = int64_t(1) << 40;
// Counts (faults, switches, samples): integers a double still holds exactly.
inline constexpr int64_t kMaxCount = int64_t(1) << 53;
// The largest estimate of a call site's live heap (or its standard error), in bytes.
inline constexpr double kMaxHeapBytes = 1e18;

// What a reader rejects, as a person reads it: "FILE: runs[3].status:
// expected a string, found 3". Thrown by JsonIn and caught by the reader of
// the document, which turns it into its error (exit 2 for a user's file).
class JsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses `text`, named `what` in errors; nullopt and the error when it is not
// JSON or passes a limit (the error names the path where nesting went too deep).
std::optional<Json> parse_json(std::string_view text, const std::string& what, const JsonLimits& limits,
                               std::string& error);
// The same for a file, named by its path; a file past the size limit is not read.
std::optional<Json> read_json_file(const std::string& path, const JsonLimits& limits, std::string& error);

// A value inside a parsed document and the path that leads to it. A child
// refers to its parent (the path is built only for an error), so a parent
// must outlive the children taken from it.
class JsonIn {
 public:
  JsonIn(const Json& j, const std::string& what) : j_(&j), what_(&what) {}

  const Json& json() const { return *j_; }
  // "runs[3].status"; "" for the document itself.
  std::string path() const;
  // "FILE: runs[3].status" (or "FILE" for the document itself).
  std::string where() const;
  [[noreturn]] void fail(const std::string& expected) const;     // "WHERE: expected X, found Y"
  [[noreturn]] void fail_because(const std::string& why) const;  // "WHERE: WHY"

  bool is_null() const { return j_->is_null(); }
  // Members of an object (the value must be one).
  bool has(std::string_view key) const;
  JsonIn at(std::string_view key) const;  // fails when absent
  std::optional<JsonIn> find(std::string_view key) const;
  void each_member(const std::function<void(const std::string&, const JsonIn&)>& f) const;
  // Elements of an array (the value must be one).
  size_t size() const;
  JsonIn operator[](size_t i) const;
  void each_element(const std::function<void(const JsonIn&)>& f) const;

  const Json& object() const;
  const Json& array() const;
  std::string string() const;
  bool boolean() const;
  // Finite and within [min, max].
  double number(double min, double max) const;
  // An integer (1.0 counts) within [min, max], checked before any conversion;
  // |min| and |max| at most 2^53.
  int64_t integer(int64_t min, int64_t max) const;

  // A member that may be absent (an older report): the default then.
  std::string string_or(std::string_view key, const std::string& def) const;
  bool boolean_or(std::string_view key, bool def) const;
  double number_or(std::string_view key, double def, double min, double max) const;
  int64_t integer_or(std::string_view key, int64_t def, int64_t min, int64_t max) const;
  // An absent or null member is none; anything else must be a number in range.
  std::optional<double> number_or_null(std::string_view key, double min, double max) const;
  std::optional<int64_t> integer_or_null(std::string_view key, int64_t min, int64_t max) const;

 private:
  JsonIn(const Json& j, const JsonIn* parent, std::string_view key, size_t index)
      : j_(&j), what_(parent->what_), parent_(parent), key_(key), index_(index) {}

  const Json* j_;
  const std::string* what_;
  const JsonIn* parent_ = nullptr;
  std::string_view key_;  // the member's name in its object ("" in an array)
  size_t index_ = 0;      // the element's index in its array
};

// How a value shows in an error: scalars as JSON (strings shortened and
// escaped), containers by kind ("an object").
std::string json_found(const Json& j);

// Runs `read` over the document; a JsonError it throws becomes `error`.
template <typename T, typename F>
std::optional<T> read_checked(F&& read, std::string& error) {
  try {
    return read();
  } catch (const JsonError& e) {
    error = e.what();
    return std::nullopt;
  }
}

}  // namespace mh
