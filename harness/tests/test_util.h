// Helpers shared by the harness tests: running the harness binary and reading
// what it wrote.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/record.h"
#include "sys/spawn.h"

namespace mh::test {

inline Captured run_harness(std::vector<std::string> args, double timeout_s = 60) {
  args.insert(args.begin(), HARNESS_BIN);
  return run_capture(args, timeout_s);
}

// A path in the scratch folder, unique to this test process (CTest runs tests
// in parallel, each in its own process).
inline std::string scratch(const std::string& name) {
  std::filesystem::create_directories(SCRATCH_DIR);
  auto p = std::filesystem::path(SCRATCH_DIR) / (std::to_string(getpid()) + "-" + name);
  std::filesystem::remove(p);
  return p.string();
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline Json load_json(const std::string& path) { return Json::parse(slurp(path)); }

}  // namespace mh::test
