// Memory limits per run (see limits.h).
#include "measure/memory_limit.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "sys/cgroup.h"
#include "sys/procfs.h"

namespace mh {

namespace fs = std::filesystem;

std::optional<uint64_t> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t used = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(text, &used, 10);
  } catch (...) {
    return std::nullopt;
  }
  if (text[0] == '-' || text[0] == '+') return std::nullopt;
  std::string unit = text.substr(used);
  uint64_t mult = 1;
  if (unit == "" || unit == "B") mult = 1;
  else if (unit == "K" || unit == "KiB" || unit == "k") mult = 1ull << 10;
  else if (unit == "M" || unit == "MiB") mult = 1ull << 20;
  else if (unit == "G" || unit == "GiB") mult = 1ull << 30;
  else return std::nullopt;
  if (n == 0 || n > (UINT64_MAX / mult)) return std::nullopt;
  return n * mult;
}

MemoryCgroup::MemoryCgroup(uint64_t bytes, const std::string& name) {
  std::error_code ec;
  // cgroup v2: a child of our own group, when the memory controller is
  // delegated to it (it is listed in our group's subtree_control). The run's
  // containment (sys/containment.h) may have made the group of that name
  // already: a process is in one group of a hierarchy, so both share it.
  if (const std::string parent = cgroup::own_dir(""); !parent.empty()) {
    std::string controllers = procfs::read_text(parent + "/cgroup.subtree_control").value_or("");
    if (controllers.find("memory") != std::string::npos) {
      std::string dir = parent + "/" + name, error;
      if (cgroup::make(dir, error) && cgroup::write_text(dir + "/memory.max", std::to_string(bytes), error) &&
          cgroup::write_text(dir + "/memory.swap.max", "0", error)) {
        dir_ = dir;
        v2_ = true;
        mechanism_ = "cgroup v2 memory.max";
        return;
      }
      fs::remove(dir, ec);
      why_ = "cgroup v2: " + (error.empty() ? "cannot create " + dir + ": " + ec.message() : error);
    } else if (why_.empty()) {
      why_ = "cgroup v2: the memory controller is not delegated to " + parent;
    }
  }
  // cgroup v1: the memory hierarchy, when it is mounted and writable.
  if (const std::string parent = cgroup::own_dir("memory"); !parent.empty()) {
    std::string dir = parent + "/" + name, error;
    if (cgroup::make(dir, error) &&
        cgroup::write_text(dir + "/memory.limit_in_bytes", std::to_string(bytes), error)) {
      // No swap for the group either, where the kernel accounts it.
      if (fs::exists(dir + "/memory.memsw.limit_in_bytes")) {
        std::string ignored;
        cgroup::write_text(dir + "/memory.memsw.limit_in_bytes", std::to_string(bytes), ignored);
      }
      dir_ = dir;
      mechanism_ = "cgroup v1 memory.limit_in_bytes";
      why_.clear();
      return;
    }
    fs::remove(dir, ec);
    why_ += (why_.empty() ? "" : "; ") + std::string("cgroup v1: ") +
            (error.empty() ? "cannot create " + dir + ": " + ec.message() : error);
  }
  if (why_.empty()) why_ = "no cgroup memory controller is mounted";
}

MemoryCgroup::~MemoryCgroup() {
  // The group's processes are gone once the run is reaped; rmdir is all.
  if (!dir_.empty()) cgroup::remove(dir_, 0.5);
}

bool MemoryCgroup::add(pid_t pid, std::string& error) const {
  return cgroup::add(dir_, pid, error);
}

int64_t MemoryCgroup::oom_kills() const {
  if (dir_.empty()) return 0;
  // Both files are "key value" lines; the key is oom_kill in both.
  std::string text = procfs::read_text(dir_ + (v2_ ? "/memory.events" : "/memory.oom_control")).value_or("");
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    if (text.compare(pos, 9, "oom_kill ") == 0) return std::atoll(text.c_str() + pos + 9);
    pos = eol + 1;
  }
  return 0;
}

Json memory_limit_json(uint64_t bytes, const std::string& mechanism, const std::string& note) {
  Json j{{"bytes", bytes}, {"mechanism", mechanism}};
  if (!note.empty()) j["note"] = note;
  return j;
}

}  // namespace mh
