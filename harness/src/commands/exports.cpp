// Exports beside a command's JSON (see exports.h).
#include "commands/exports.h"

#include "sys/output_file.h"

namespace mh {

std::string check_export(const std::string& path, const std::string& option) {
  if (path.empty()) return "";
  auto e = output_file::check_target(path);
  return e.empty() ? "" : option + ": " + e;
}

std::string write_export(const std::string& path, const std::string& text) {
  if (path.empty()) return "";
  return output_file::write_atomic(path, text);
}

std::FILE* table_stream(const std::vector<std::string>& outputs) {
  for (const auto& o : outputs)
    if (o == output_file::kStdout) return stderr;
  return stdout;
}

}  // namespace mh
