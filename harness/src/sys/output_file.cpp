// Writing the harness's files safely (see output_file.h).
#include "sys/output_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "sys/input_file.h"

namespace mh::output_file {

namespace {

namespace fs = std::filesystem;

std::string errno_text(int err) { return std::strerror(err); }

fs::path folder_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// Six characters from the kernel's random pool: a name nobody can plant ahead.
std::string random_part() {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  unsigned char bytes[6];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
    else if (errno != EINTR) break;
  }
  std::string out;
  for (unsigned char b : bytes) out += kAlphabet[b % (sizeof kAlphabet - 1)];
  return out;
}

// A new file dir/PREFIX<random>SUFFIX, never an existing name or a link.
int create_new(const fs::path& dir, const std::string& prefix, const std::string& suffix, std::string& made,
               std::string& error) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    made = (dir / (prefix + random_part() + suffix)).string();
    const int fd = ::open(made.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (const int err = errno; err != EEXIST) {
      error = "cannot create a file in " + dir.string() + ": " + errno_text(err);
      errno = err;  // for the caller's own words
      return -1;
    }
  }
  error = "cannot find a free name for " + prefix + "..." + suffix + " in " + dir.string();
  return -1;
}

// The folder the target will be made in, or its nearest ancestor that exists
// (the ones missing are made when writing): it must be a folder that takes
// new files.
std::string check_folder(const std::string& path) {
  fs::path dir = folder_of(path);
  struct stat st {};
  while (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) return "cannot write " + path + ": " + dir.string() + ": " + errno_text(errno);
    if (dir.has_parent_path() && dir.parent_path() == dir) return "cannot write " + path + ": no folder of it exists";
    dir = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  }
  if (!S_ISDIR(st.st_mode)) return "cannot write " + path + ": " + dir.string() + " is not a folder";
  // A file made and removed at once: access() says yes to root in /proc.
  std::string probe, error;
  const int fd = create_new(dir, ".memharness-probe.", "", probe, error);
  if (fd >= 0) {
    ::close(fd);
    ::unlink(probe.c_str());
    return "";
  }
  // "No such file or directory" for a folder that exists (/proc) reads as a typo in the path.
  const int err = errno;
  const std::string why = err == EACCES || err == EPERM ? "no permission to create files there"
                          : err == EROFS               ? "it is on a read-only file system"
                                                       : "it takes no new files (" + errno_text(err) + ")";
  return "cannot write " + path + " in the folder " + dir.string() + ": " + why;
}

// All of `text` to fd, synced; fd stays open. "" or the error.
std::string write_synced(int fd, const std::string& text, const std::string& name) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "cannot write " + name + ": " + errno_text(n < 0 ? errno : ENOSPC);
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) < 0) return "cannot write " + name + ": " + errno_text(errno);
  return "";
}

// write_synced, then closes fd. "" or the error.
std::string write_fully(int fd, const std::string& text, const std::string& name) {
  std::string e = write_synced(fd, text, name);
  if (::close(fd) < 0 && e.empty()) e = "cannot write " + name + ": " + errno_text(errno);
  return e;
}

std::string write_stdout(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
    return "cannot write to standard output: " + errno_text(errno);
  return "";
}

}  // namespace

std::string check_target(const std::string& path) {
  if (path == kStdout) return "";
  if (path.empty()) return "an empty file name";
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      return path + " is " + input_file::kind_of(st.st_mode) +
             ", not a regular file: the harness writes a file by replacing it, so it names only regular files "
             "(- for standard output)";
  } else if (errno != ENOENT && errno != ENOTDIR) {
    return "cannot write " + path + ": " + errno_text(errno);
  }
  return check_folder(path);
}

std::string check_file(const std::string& path) {
  if (path == kStdout) return "- (standard output) cannot be used here: this file is written as the command goes";
  return check_target(path);
}

std::string write_atomic(const std::string& path, const std::string& text) {
  if (path == kStdout) return write_stdout(text);
  if (auto e = check_target(path); !e.empty()) return e;
  const fs::path dir = folder_of(path);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create the folder " + dir.string() + " for " + path + ": " + ec.message();
  std::string tmp, error;
  const int fd = create_new(dir, fs::path(path).filename().string() + ".tmp.", "", tmp, error);
  if (fd < 0) return "cannot write " + path + ": " + error;
  if (auto e = write_fully(fd, text, tmp); !e.empty()) {
    ::unlink(tmp.c_str());
    return e;
  }
  // Planted while the text was written: still refused, never replaced.
  std::string e = check_target(path);
  if (e.empty() && ::rename(tmp.c_str(), path.c_str()) < 0)
    e = "cannot rename " + tmp + " to " + path + ": " + errno_text(errno);
  if (!e.empty()) ::unlink(tmp.c_str());
  return e;
}

std::string write_new(const std::string& dir, const std::string& prefix, const std::string& suffix,
                      const std::string& text, std::string& error) {
  std::string made;
  const int fd = create_new(dir, prefix, suffix, made, error);
  if (fd < 0) return "";
  error = write_fully(fd, text, made);
  if (!error.empty()) {
    ::unlink(made.c_str());
    return "";
  }
  return made;
}

int open_beside(const std::string& path, const std::string& infix, std::string& made, std::string& error) {
  const fs::path dir = folder_of(path);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create the folder " + dir.string() + ": " + ec.message();
    return -1;
  }
  return create_new(dir, fs::path(path).filename().string() + infix, "", made, error);
}

std::string append_synced(int fd, const std::string& text, const std::string& name) {
  return write_synced(fd, text, name);
}

}  // namespace mh::output_file
