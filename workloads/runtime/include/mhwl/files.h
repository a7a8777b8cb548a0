// Files for workloads: a private temporary directory removed on destruction,
// and whole-file write and read with short-write handling.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mhwl {

class TempDir {
 public:
  // Under `parent`, or $TMPDIR, or /tmp. Throws std::system_error on failure.
  explicit TempDir(const std::string& prefix, const std::string& parent = "");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Returns 0 or an errno value.
int write_file(const std::string& path, const void* data, size_t len);
int read_file(const std::string& path, std::vector<char>& out);

}  // namespace mhwl
