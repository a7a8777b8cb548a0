// The exports a command writes beside its JSON (--export-markdown,
// --export-csv): checked before anything runs, written at the end, "-" for
// standard output. Main thread only.
#pragma once

#include <string>

namespace mh {

// "" when `path` can be written (or is "-", stdout), else the error naming the
// option.
std::string check_export(const std::string& path, const std::string& option);
// Writes an export ("-": stdout). Returns "" or the error.
std::string write_export(const std::string& path, const std::string& text);

}  // namespace mh
