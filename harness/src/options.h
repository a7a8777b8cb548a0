// Harness flags, declared once with their help text and gathered into one
// Options value that is passed down; nothing reads flags from globals.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mh {

struct Options {
  std::string workload;
  std::vector<std::string> workload_args;  // everything the harness does not know
  std::vector<std::string> allocators;     // specs as given; empty = every available built-in
  int runs = 3;
  double timeout_s = 600;
  double sample_ms = 10;
  std::string out;  // "" = results/<workload>-<UTC time>.json
  bool quiet = false;
  bool verbose = false;
  bool list = false;
  std::vector<std::string> argv;  // the exact command line, for the report
};

struct ParseOutcome {
  std::optional<Options> options;  // set when the run should go on
  int exit_code = 0;               // otherwise: 0 after --help, 2 on bad input
};

ParseOutcome parse_options(int argc, char** argv);

}  // namespace mh
