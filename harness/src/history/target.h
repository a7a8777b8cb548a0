// Where runs go into the history and under what labels: the store file, the
// revision measured and the machine's name (docs/history.md). Plain data,
// carried whole from the command line to where runs are added.
#pragma once

#include <string>

namespace mh::history {

struct Target {
  std::string file;      // "" adds nothing
  std::string revision;  // "" the pin's, else git HEAD of cwd, else the harness's revision
  std::string machine;   // "" the report's host
  std::string cwd;       // the repository the revision is of ("" none given)
};

}  // namespace mh::history
