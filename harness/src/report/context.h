// The context block of a report: when, where and with what the runs were made.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"

namespace mh {

struct BuildInfo {
  std::string version, git_revision, build_type;
};
BuildInfo build_info();

// Reads the machine (host, kernel, CPUs, THP) and records the command line.
Json make_context(const std::vector<std::string>& argv);

// "2026-11-30T08:16:16Z" (file names use output_names.h's stamp).
std::string utc_now();

}  // namespace mh
