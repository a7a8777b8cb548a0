// Exports beside a command's JSON (see exports.h).
#include "commands/exports.h"

#include <cstdio>

#include "report/report_json.h"

namespace mh {

std::string check_export(const std::string& path, const std::string& option) {
  if (path.empty() || path == "-") return "";
  auto e = check_writable(path);
  return e.empty() ? "" : option + ": " + e;
}

std::string write_export(const std::string& path, const std::string& text) {
  if (path.empty()) return "";
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return "";
  }
  return write_atomic(path, text);
}

}  // namespace mh
