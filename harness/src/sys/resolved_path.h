// A file's path with symbolic links and ".." resolved, for comparing two names
// of one file (the library a run was asked to load and the one it mapped).
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

namespace mh {

// The path as the file system resolves it; the path itself where it does not
// resolve (missing, unreadable), so that two such paths compare as written.
inline std::string canonical_or_same(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::canonical(path, ec);
  return ec ? path : p.string();
}

}  // namespace mh
