// A path's last component, as the tables and the checks of a run's mappings
// name an object or a file. Pure; any thread.
#pragma once

#include <string>

namespace mh {

// "/usr/lib/libc.so.6" -> "libc.so.6"; a path without '/' is its own name.
inline std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace mh
