// How a history series is named where a person reads it (history show, steps
// and the page): the workload or program name, then only the parameters that
// differ from the workload's defaults (`total=64M smoke`), never the stored
// JSON; a program's command when it was not given a --name. Main thread only
// (it asks the workload binaries for their defaults and keeps them).
#pragma once

#include <map>
#include <string>

#include "core/record.h"

namespace mh {

class SeriesNames {
 public:
  explicit SeriesNames(std::string workload_dir) : dir_(std::move(workload_dir)) {}
  // "idle-return total=64M" for a series' workload and its stored parameters.
  std::string name(const std::string& workload, const std::string& params_json);

 private:
  // The workload's resolved parameters with nothing given (and with --smoke),
  // or null when it is not a workload of this build.
  const Json& defaults(const std::string& workload, bool smoke);
  std::string dir_;
  std::map<std::pair<std::string, bool>, Json> defaults_;
};

// A parameter's value as the command line writes it: sizes of whole KiB, MiB
// or GiB with their suffix, whole numbers without decimals, strings as they are.
std::string parameter_text(const Json& value);

}  // namespace mh
