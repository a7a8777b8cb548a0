// The validating JSON reader (see json_read.h).
#include "sys/json_read.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "sys/input_file.h"

namespace mh {

namespace {

// A member's name as a path component: plain when it reads as one, else
// quoted and escaped, so that a key with control characters or dots in odd
// places cannot garble the message.
std::string key_component(std::string_view key) {
  bool plain = !key.empty();
  for (char c : key)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '*');
  if (plain) return std::string(key);
  std::string quoted(1, '[');
  quoted += json_text(Json(std::string(key)));
  quoted += ']';
  return quoted;
}

void append_component(std::string& path, const std::string& component) {
  if (!path.empty() && component[0] != '[') path += '.';
  path += component;
}

// Where the parser is, for the nesting error: a frame per open container.
class NestingGuard {
 public:
  struct TooDeep {
    std::string path;
  };
  explicit NestingGuard(int max_depth) : max_depth_(max_depth) {}

  bool on_event(nlohmann::json::parse_event_t event, const Json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        if (static_cast<int>(frames_.size()) >= max_depth_) throw TooDeep{path()};
        frames_.push_back({event == E::array_start, 0, {}});
        break;
      case E::key: frames_.back().key = parsed.get<std::string>(); break;
      case E::object_end:
      case E::array_end:
        frames_.pop_back();
        value_done();
        break;
      case E::value: value_done(); break;
    }
    return true;
  }

 private:
  struct Frame {
    bool array;
    size_t index;
    std::string key;
  };
  void value_done() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  // The path of the value being opened; the middle of a long one elided.
  std::string path() const {
    std::vector<std::string> parts;
    for (const auto& f : frames_) parts.push_back(f.array ? fmt::format("[{}]", f.index) : key_component(f.key));
    std::string out;
    const size_t keep_head = 8, keep_tail = 2;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (parts.size() > keep_head + keep_tail + 1 && i == keep_head) {
        out += "...";
        i = parts.size() - keep_tail - 1;
        continue;
      }
      append_component(out, parts[i]);
    }
    return out;
  }

  int max_depth_;
  std::vector<Frame> frames_;
};

std::string shortened(const std::string& s, size_t max) {
  return s.size() <= max ? s : s.substr(0, max) + "...";
}

}  // namespace

std::optional<Json> parse_json(std::string_view text, const std::string& what, const JsonLimits& limits,
                               std::string& error) {
  if (text.size() > limits.max_bytes) {
    error = fmt::format("{}: {} bytes, more than the {} this reader takes", what, text.size(), limits.max_bytes);
    return std::nullopt;
  }
  NestingGuard guard(limits.max_depth);
  try {
    return Json::parse(
        text.begin(), text.end(),
        [&guard](int, nlohmann::json::parse_event_t e, Json& parsed) { return guard.on_event(e, parsed); });
  } catch (const NestingGuard::TooDeep& deep) {
    error = fmt::format("{}: {}: nested deeper than {} levels", what, deep.path.empty() ? "the top level" : deep.path,
                        limits.max_depth);
  } catch (const Json::exception& e) {
    error = what + ": not JSON (" + shortened(e.what(), 200) + ")";
  }
  return std::nullopt;
}

std::optional<Json> read_json_file(const std::string& path, const JsonLimits& limits, std::string& error) {
  // A FIFO or a device is refused before any read; a larger file after one byte past the limit.
  auto text = input_file::read_all(path, limits.max_bytes, error);
  if (!text) return std::nullopt;
  return parse_json(*text, path, limits, error);
}

std::string json_found(const Json& j) {
  if (j.is_object()) return "an object";
  if (j.is_array()) return "an array";
  return shortened(j.dump(-1, ' ', true, Json::error_handler_t::replace), 60);
}

std::string JsonIn::path() const {
  if (!parent_) return "";
  std::string out = parent_->path();
  append_component(out, parent_->j_->is_array() ? fmt::format("[{}]", index_) : key_component(key_));
  return out;
}

std::string JsonIn::where() const {
  const std::string p = path();
  return p.empty() ? *what_ : *what_ + ": " + p;
}

void JsonIn::fail(const std::string& expected) const {
  throw JsonError(where() + ": expected " + expected + ", found " + json_found(*j_));
}

void JsonIn::fail_because(const std::string& why) const { throw JsonError(where() + ": " + why); }

bool JsonIn::has(std::string_view key) const { return object().contains(key); }

JsonIn JsonIn::at(std::string_view key) const {
  if (auto m = find(key)) return *m;
  fail_because(fmt::format("has no \"{}\"", key));
}

std::optional<JsonIn> JsonIn::find(std::string_view key) const {
  const Json& o = object();
  auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  return JsonIn(*it, this, it.key(), 0);
}

void JsonIn::each_member(const std::function<void(const std::string&, const JsonIn&)>& f) const {
  for (auto it = object().begin(); it != j_->end(); ++it) f(it.key(), JsonIn(*it, this, it.key(), 0));
}

size_t JsonIn::size() const { return array().size(); }

JsonIn JsonIn::operator[](size_t i) const { return JsonIn(array().at(i), this, {}, i); }

void JsonIn::each_element(const std::function<void(const JsonIn&)>& f) const {
  const Json& a = array();
  for (size_t i = 0; i < a.size(); ++i) f(JsonIn(a[i], this, {}, i));
}

const Json& JsonIn::object() const {
  if (!j_->is_object()) fail("an object");
  return *j_;
}

const Json& JsonIn::array() const {
  if (!j_->is_array()) fail("an array");
  return *j_;
}

std::string JsonIn::string() const {
  if (!j_->is_string()) fail("a string");
  return j_->get<std::string>();
}

bool JsonIn::boolean() const {
  if (!j_->is_boolean()) fail("true or false");
  return j_->get<bool>();
}

double JsonIn::number(double min, double max) const {
  const std::string expected = fmt::format("a number from {} to {}", min, max);
  if (!j_->is_number()) fail(expected);
  const double v = j_->get<double>();
  if (!std::isfinite(v) || v < min || v > max) fail(expected);
  return v;
}

int64_t JsonIn::integer(int64_t min, int64_t max) const {
  const std::string expected = fmt::format("an integer from {} to {}", min, max);
  if (j_->is_number_unsigned()) {
    const uint64_t u = j_->get<uint64_t>();
    if (max < 0 || u > static_cast<uint64_t>(max)) fail(expected);
    return static_cast<int64_t>(u);
  }
  if (j_->is_number_integer()) {
    const int64_t v = j_->get<int64_t>();
    if (v < min || v > max) fail(expected);
    return v;
  }
  if (!j_->is_number()) fail(expected);
  // Compared as doubles first: the conversion of a value out of int64_t's range is undefined.
  const double d = j_->get<double>();
  if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(min) || d > static_cast<double>(max))
    fail(expected);
  return static_cast<int64_t>(d);
}

std::string JsonIn::string_or(std::string_view key, const std::string& def) const {
  auto m = find(key);
  return m ? m->string() : def;
}

bool JsonIn::boolean_or(std::string_view key, bool def) const {
  auto m = find(key);
  return m ? m->boolean() : def;
}

double JsonIn::number_or(std::string_view key, double def, double min, double max) const {
  auto m = find(key);
  return m ? m->number(min, max) : def;
}

int64_t JsonIn::integer_or(std::string_view key, int64_t def, int64_t min, int64_t max) const {
  auto m = find(key);
  return m ? m->integer(min, max) : def;
}

std::optional<double> JsonIn::number_or_null(std::string_view key, double min, double max) const {
  auto m = find(key);
  if (!m || m->is_null()) return std::nullopt;
  return m->number(min, max);
}

std::optional<int64_t> JsonIn::integer_or_null(std::string_view key, int64_t min, int64_t max) const {
  auto m = find(key);
  if (!m || m->is_null()) return std::nullopt;
  return m->integer(min, max);
}

}  // namespace mh
