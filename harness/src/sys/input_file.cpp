// Opening the files the harness reads, checked before any read (see input_file.h).
#include "sys/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mh::input_file {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a named pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

int open_regular(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    error = fmt::format("cannot read {}: {}", path, std::strerror(errno));
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = fmt::format("cannot read {}: {}", path, std::strerror(errno));
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    error = fmt::format("cannot read {}: it is {}, not a regular file", path, kind_of(st.st_mode));
    ::close(fd);
    return -1;
  }
  return fd;
}

File open_file(const std::string& path, std::string& error) {
  File f(nullptr, &std::fclose);
  const int fd = open_regular(path, error);
  if (fd < 0) return f;
  f.reset(::fdopen(fd, "rb"));
  if (!f) {
    error = fmt::format("cannot read {}: {}", path, std::strerror(errno));
    ::close(fd);
  }
  return f;
}

std::optional<std::string> read_all(const std::string& path, size_t max_bytes, std::string& error) {
  const int fd = open_regular(path, error);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[1 << 16];
  while (text.size() <= max_bytes) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = fmt::format("cannot read {}: {}", path, std::strerror(errno));
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (text.size() > max_bytes) {
    error = fmt::format("{}: larger than the {} bytes this reader takes", path, max_bytes);
    return std::nullopt;
  }
  return text;
}

std::string check_regular_or_absent(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0)
    return S_ISREG(st.st_mode) ? "" : fmt::format("{} is {}, not a regular file", path, kind_of(st.st_mode));
  if (errno == ENOENT || errno == ENOTDIR) return "";
  return fmt::format("cannot use {}: {}", path, std::strerror(errno));
}

}  // namespace mh::input_file
