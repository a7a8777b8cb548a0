// Output names (see output_names.h).
#include "report/output_names.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>

namespace mh {

std::string utc_stamp_ms() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  time_t t = static_cast<time_t>(ms / 1000);
  tm g{};
  gmtime_r(&t, &g);
  char buf[40];
  size_t n = strftime(buf, sizeof buf, "%Y%m%dT%H%M%S", &g);
  snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(ms % 1000));
  return buf;
}

std::vector<std::string> reserve_new_outputs(const std::string& stem, const std::vector<std::string>& suffixes,
                                             std::string& error) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(stem).has_parent_path() ? fs::path(stem).parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create the directory " + dir.string() + ": " + ec.message();
    return {};
  }
  const std::string base = stem + "-" + utc_stamp_ms();
  for (int attempt = 1; attempt < 1000; ++attempt) {
    const std::string name = attempt == 1 ? base : base + "-" + std::to_string(attempt);
    std::vector<std::string> made;
    bool clash = false;
    for (const auto& suffix : suffixes) {
      std::string path = name + suffix;
      int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0) {
        int err = errno;
        for (const auto& p : made) ::unlink(p.c_str());
        if (err != EEXIST) {
          error = "cannot write " + path + ": " + std::strerror(err);
          return {};
        }
        clash = true;
        break;
      }
      ::close(fd);
      made.push_back(path);
    }
    if (!clash) return made;
  }
  error = "cannot find a free name for " + base + " in " + dir.string();
  return {};
}

}  // namespace mh
