// The exports a command writes beside its JSON (--export-markdown,
// --export-csv): checked before anything runs, written at the end, "-" for
// standard output. Main thread only.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace mh {

// "" when `path` can be written (or is "-", stdout), else the error naming the
// option.
std::string check_export(const std::string& path, const std::string& option);
// Writes an export ("-": stdout). Returns "" or the error.
std::string write_export(const std::string& path, const std::string& text);
// Where the terminal table and the lines that name the outputs go: standard
// error when one of `outputs` is standard output ("-"), so that what is piped
// into jq or a pager is that file alone; standard output otherwise.
std::FILE* table_stream(const std::vector<std::string>& outputs);

}  // namespace mh
