// HTTP head parsing for server-echo (see http.h).
#include "http.h"

#include <cctype>

namespace echo {

namespace {

bool iequals_prefix(std::string_view line, std::string_view name) {
  if (line.size() < name.size()) return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
  return true;
}

std::string_view trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

}  // namespace

ParseResult parse_head(std::string_view bytes, Head& out, size_t max_head) {
  const size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) return bytes.size() > max_head ? ParseResult::Bad : ParseResult::Incomplete;
  if (end + 4 > max_head) return ParseResult::Bad;
  out = Head{};
  out.head_len = end + 4;
  std::string_view rest = bytes.substr(0, end + 2);  // every line keeps its CRLF
  const size_t first = rest.find("\r\n");
  if (first == 0) return ParseResult::Bad;
  rest.remove_prefix(first + 2);
  while (!rest.empty()) {
    const size_t eol = rest.find("\r\n");
    std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol + 2);
    if (iequals_prefix(line, "content-length:")) {
      std::string_view v = trim(line.substr(15));
      if (v.empty()) return ParseResult::Bad;
      size_t n = 0;
      for (char c : v) {
        if (c < '0' || c > '9' || n > (size_t(1) << 40)) return ParseResult::Bad;
        n = n * 10 + static_cast<size_t>(c - '0');
      }
      out.content_length = n;
    } else if (iequals_prefix(line, "connection:")) {
      std::string_view v = trim(line.substr(11));
      out.close = v.size() == 5 && iequals_prefix(v, "close");
    }
  }
  return ParseResult::Ok;
}

}  // namespace echo
