// Valid UTF-8 where text enters, and escaping for the terminal, markdown and
// CSV (see escape.h).
#include "core/escape.h"

#include <fmt/format.h>

#include <cctype>

namespace mh::escape {

namespace {

// The length of the UTF-8 sequence at s[i], 0 when the bytes there are not
// one (a stray continuation byte, a truncated or overlong sequence, a
// surrogate, past U+10FFFF): what nlohmann's dump() refuses.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const size_t n = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;
  if (b >= 0xf5 || n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  const auto c1 = static_cast<unsigned char>(s[i + 1]);
  if ((b == 0xe0 && c1 < 0xa0) || (b == 0xed && c1 >= 0xa0) || (b == 0xf0 && c1 < 0x90) || (b == 0xf4 && c1 >= 0x90))
    return 0;
  return n;
}

std::string escaped(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b >= 0x80) {
      const size_t n = utf8_length(s, i);
      // U+0080..U+009F are the C1 controls (CSI among them) in two bytes.
      if (n == 2 && b == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0)
        out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
      else if (n == 0)
        out += fmt::format("\\x{:02x}", b);
      else
        out.append(s.substr(i, n));
      i += n == 0 ? 1 : n;
      continue;
    }
    switch (b) {
      case '\\': out += "\\\\"; break;
      case '\n': out += keep_newlines ? "\n" : "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case 0x1b: out += "\\e"; break;
      default:
        if (b < 0x20 || b == 0x7f) out += fmt::format("\\x{:02x}", b);
        else out += static_cast<char>(b);
    }
    ++i;
  }
  return out;
}

// A byte that is not UTF-8 in `identity`'s escape.
std::string byte_escape(unsigned char b) { return fmt::format("\\x{:02x}", b); }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ascii_digit(std::string_view s, size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; }

bool starts_with_nocase(std::string_view s, size_t i, std::string_view word) {
  if (i + word.size() > s.size()) return false;
  for (size_t k = 0; k < word.size(); ++k)
    if (std::tolower(static_cast<unsigned char>(s[i + k])) != word[k]) return false;
  return true;
}

// GitHub's mentions (@user, @org/team), references (#123, owner/repo#123,
// GH-123, user@sha) and autolinks (scheme://..., www., addresses) each broken
// by a word joiner at the place that escape.h names.
std::string unlinked(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && i >= 3 && starts_with_nocase(s, i - 3, "www")) out += kWordJoiner;
    out += c;
    const bool joined = c == '@' || (c == '#' && ascii_digit(s, i + 1)) ||
                        (c == ':' && s.substr(i + 1, 2) == "//") ||
                        ((c == 'h' || c == 'H') && i >= 1 && starts_with_nocase(s, i - 1, "gh-") &&
                         ascii_digit(s, i + 2));
    if (joined) out += kWordJoiner;
  }
  return out;
}

}  // namespace

std::string shown(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : utf8_length(s, i);
    if (n == 0) out += "\xef\xbf\xbd";  // U+FFFD
    else out.append(s.substr(i, n));
    i += n == 0 ? 1 : n;
  }
  return out;
}

std::string shown_tail(std::string_view s, size_t max_bytes) {
  size_t start = s.size() > max_bytes ? s.size() - max_bytes : 0;
  // Past the continuation bytes of a character the cut fell into.
  for (int k = 0; k < 3 && start > 0 && start < s.size() && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80; ++k)
    ++start;
  std::string out = shown(s.substr(start));
  // Each replaced byte took three: cut again, now at a character's start.
  size_t cut = out.size() > max_bytes ? out.size() - max_bytes : 0;
  while (cut < out.size() && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80) ++cut;
  return out.substr(cut);
}

std::string identity(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : utf8_length(s, i);
    if (n == 0) {
      out += byte_escape(b);
      ++i;
      continue;
    }
    if (b == '\\' && i + 1 < s.size()) {
      // What follows starts with a backslash when it is one or is a byte
      // that is not UTF-8 (its escape).
      const auto next = static_cast<unsigned char>(s[i + 1]);
      if (next == '\\' || next == 'x' || (next >= 0x80 && utf8_length(s, i + 1) == 0)) out += '\\';
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

std::vector<std::string> identity(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  out.reserve(words.size());
  for (const auto& w : words) out.push_back(identity(w));
  return out;
}

std::string from_identity(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
    } else if (s[i + 1] == '\\') {
      out += '\\';
      ++i;
    } else if (s[i + 1] == 'x' && i + 3 < s.size() && hex_digit(s[i + 2]) >= 0 && hex_digit(s[i + 3]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 2]) * 16 + hex_digit(s[i + 3]));
      i += 3;
    } else {
      out += '\\';
    }
  }
  return out;
}

std::string terminal(std::string_view s) { return escaped(s, false); }

std::string terminal_lines(std::string_view s) { return escaped(s, true); }

std::string markdown(std::string_view s) {
  std::string out;
  for (char c : terminal(s)) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '`': out += "\\`"; break;
      case '[': out += "\\["; break;
      case ']': out += "\\]"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      default: out += c;
    }
  }
  return unlinked(out);
}

std::string csv(std::string_view s) {
  // OWASP's rule for CSV injection: a leading ' makes the cell text.
  const bool formula = !s.empty() && std::string_view("=+-@\t\r").find(s[0]) != std::string_view::npos;
  std::string cell(formula ? "'" : "");
  cell.append(s);
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string script_json(std::string_view json) {
  std::string out;
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else out += c;
  }
  return out;
}

}  // namespace mh::escape
