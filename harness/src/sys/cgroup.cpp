// The cgroup file system (see cgroup.h).
#include "sys/cgroup.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "sys/procfs.h"

namespace mh::cgroup {

namespace fs = std::filesystem;

namespace {

// This process's group in a hierarchy, as /proc/self/cgroup names it: v2's
// line is "0::/path", a v1 hierarchy's lists its controllers. "" when the
// root (so that paths join without "//") or when not found.
std::string own(const std::string& controller) {
  std::string found;
  procfs::for_each_line(procfs::read_text("/proc/self/cgroup").value_or(""), [&](std::string_view line) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string_view::npos || b == std::string_view::npos) return;
    std::string list(line.substr(a + 1, b - a - 1));
    bool match = controller.empty() ? list.empty() : ("," + list + ",").find("," + controller + ",") != std::string::npos;
    if (match) found = line.substr(b + 1);
  });
  return found == "/" ? "" : found;
}

// The folders below `dir`, deepest first.
std::vector<std::string> groups_below(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) out.push_back(it->path().string());
  // A child's path is longer than its parent's: the longest first are the deepest.
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

using Clock = std::chrono::steady_clock;

// Calls `done` every 5 ms until it is true or `wait_s` passed; its last answer.
template <class F>
bool wait_until(double wait_s, F done) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait_s));
  while (!done()) {
    if (Clock::now() >= deadline) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace

bool write_text(const std::string& path, const std::string& text, std::string& error) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  bool ok = std::fputs(text.c_str(), f) >= 0;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) error = "cannot write " + text + " to " + path + ": " + std::strerror(errno);
  return ok;
}

std::string v2_root() {
  for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"})
    if (access((std::string(root) + "/cgroup.controllers").c_str(), F_OK) == 0) return root;
  return "";
}

std::string own_dir(const std::string& controller) {
  if (controller.empty()) {
    const std::string root = v2_root();
    return root.empty() ? "" : root + own("");
  }
  const std::string root = "/sys/fs/cgroup/" + controller;
  return access((root + "/cgroup.procs").c_str(), F_OK) == 0 ? root + own(controller) : "";
}

bool make(const std::string& dir, std::string& error) {
  std::error_code ec;
  fs::create_directory(dir, ec);
  if (ec) error = "cannot create " + dir + ": " + ec.message();
  return !ec;
}

bool add(const std::string& dir, pid_t pid, std::string& error) {
  return write_text(dir + "/cgroup.procs", std::to_string(pid), error);
}

std::vector<pid_t> procs(const std::string& dir) {
  std::vector<pid_t> out;
  std::vector<std::string> dirs = groups_below(dir);
  dirs.push_back(dir);
  for (const auto& d : dirs)
    procfs::for_each_line(procfs::read_text(d + "/cgroup.procs").value_or(""), [&](std::string_view line) {
      pid_t pid = 0;
      if (std::from_chars(line.data(), line.data() + line.size(), pid).ec == std::errc()) out.push_back(pid);
    });
  return out;
}

bool kill_v2(const std::string& dir, std::string& error) { return write_text(dir + "/cgroup.kill", "1", error); }

bool kill_frozen_v1(const std::string& dir, std::string& error) {
  if (!write_text(dir + "/freezer.state", "FROZEN", error)) return false;
  // A task in uninterruptible sleep keeps the group FREEZING; SIGKILL still
  // reaches it when it wakes.
  wait_until(1.0, [&] { return procfs::read_text(dir + "/freezer.state").value_or("").rfind("FROZEN", 0) == 0; });
  for (pid_t pid : procs(dir)) kill(pid, SIGKILL);
  return write_text(dir + "/freezer.state", "THAWED", error);
}

PressureTotals parse_pressure(std::string_view text) {
  PressureTotals out;
  procfs::for_each_line(text, [&](std::string_view line) {
    const size_t at = line.find(" total=");
    uint64_t total = 0;
    if (at == std::string_view::npos ||
        std::from_chars(line.data() + at + 7, line.data() + line.size(), total).ec != std::errc())
      return;
    if (line.rfind("some ", 0) == 0) out.some_us = total;
    if (line.rfind("full ", 0) == 0) out.full_us = total;
  });
  return out;
}

std::optional<int64_t> keyed_value(std::string_view text, std::string_view key) {
  std::optional<int64_t> out;
  procfs::for_each_line(text, [&](std::string_view line) {
    if (line.size() <= key.size() || line.compare(0, key.size(), key) != 0 || line[key.size()] != ' ') return;
    int64_t v = 0;
    const char* first = line.data() + key.size() + 1;
    if (std::from_chars(first, line.data() + line.size(), v).ec == std::errc()) out = v;
  });
  return out;
}

std::string v2_memory_why_not() {
  const std::string parent = own_dir("");
  if (parent.empty()) return "no cgroup v2 hierarchy is mounted";
  const std::string root = v2_root();
  const std::string controllers = procfs::read_text(root + "/cgroup.controllers").value_or("");
  if (controllers.find("memory") == std::string::npos)
    return "the memory controller is not on cgroup v2 here (" + root + "/cgroup.controllers: \"" +
           controllers.substr(0, controllers.find('\n')) + "\"); it is on cgroup v1";
  if (procfs::read_text(parent + "/cgroup.subtree_control").value_or("").find("memory") == std::string::npos)
    return "the memory controller is not delegated to " + parent +
           " (its cgroup.subtree_control lacks memory): see docs/memory-needed.md";
  return "";
}

bool remove(const std::string& dir, double wait_s) {
  std::vector<std::string> dirs = groups_below(dir);
  dirs.push_back(dir);
  bool all = true;
  for (const auto& d : dirs)
    all = wait_until(wait_s, [&] { return rmdir(d.c_str()) == 0 || errno != EBUSY; }) && all;
  return all && access(dir.c_str(), F_OK) != 0;
}

}  // namespace mh::cgroup
