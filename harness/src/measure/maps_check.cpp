// Verification by the process's mapped files (see maps_check.h).
#include "measure/maps_check.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <regex>

#include "core/paths.h"
#include "sys/elf_symbols.h"
#include "sys/heap_ledger.h"
#include "sys/procfs.h"
#include "sys/resolved_path.h"

namespace mh {

namespace {


bool is_libc(const std::string& path) { return base_name(path).rfind("libc.so", 0) == 0; }

bool looks_shared(const std::string& path) { return base_name(path).find(".so") != std::string::npos; }

bool elf_defines_malloc(const std::string& path) {
  std::string why;
  return defines_dynamic_symbol(path, "malloc", why);
}

}  // namespace

std::vector<std::string> other_heaps(const std::vector<std::string>& files, const std::string& executable) {
  static const std::regex interpreter("python[0-9.]*"), library("libpython[0-9][0-9.]*[dmu]*\\.so.*");
  bool python = std::regex_match(base_name(executable), interpreter);
  for (const auto& f : files) python = python || std::regex_match(base_name(f), library);
  if (python) return {"pymalloc"};
  return {};
}

std::vector<std::string> mapped_files(std::string_view text) {
  std::vector<std::string> out;
  procfs::for_each_line(text, [&](std::string_view line) {
    // address perms offset dev inode   path
    size_t field = 0, i = 0;
    while (i < line.size() && field < 5) {
      while (i < line.size() && line[i] != ' ') ++i;
      while (i < line.size() && line[i] == ' ') ++i;
      ++field;
    }
    if (field < 5 || i >= line.size() || line[i] != '/') return;
    std::string path(line.substr(i));
    if (path.ends_with(" (deleted)")) path.resize(path.size() - 10);
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  });
  return out;
}

MapsVerdict judge_maps(const std::vector<std::string>& files, const std::string& executable, const std::string& library,
                       bool (*defines_malloc)(const std::string&)) {
  MapsVerdict v;
  auto libc = std::find_if(files.begin(), files.end(), is_libc);
  v.loaded = libc != files.end();
  if (!v.loaded) {
    v.reason = "the loader had not mapped libc yet";
    return v;
  }
  if (!executable.empty() && defines_malloc(executable)) {
    v.reason = executable + " defines malloc itself, so its own allocator serves it, not " +
               (library.empty() ? std::string("glibc") : library);
    return v;
  }
  if (!library.empty()) {
    if (std::find(files.begin(), files.end(), library) == files.end()) {
      v.reason = "LD_PRELOAD was not honoured: " + library + " is not mapped in " +
                 (executable.empty() ? std::string("the process") : executable) +
                 " (it cleared LD_PRELOAD, or an exec dropped it)";
      return v;
    }
    v.verified = true;
    v.served_by = library;
    return v;
  }
  for (const auto& f : files)
    if (f != *libc && f != executable && looks_shared(f) && defines_malloc(f)) {
      v.reason = f + " is mapped in the process and defines malloc: glibc's malloc is not the one serving it";
      return v;
    }
  v.verified = true;
  v.served_by = *libc;
  return v;
}

MapsWatch::MapsWatch(int pid, std::string library, std::string proc_root)
    : pid_(pid), library_(library.empty() ? "" : canonical_or_same(library)), root_(std::move(proc_root)) {
  verdict_.reason = "the process's memory map was never read";
}

bool MapsWatch::read_once() {
  const std::string dir = root_ + "/" + std::to_string(pid_);
  auto text = procfs::read_text(dir + "/maps");
  if (!text || text->empty()) return false;  // gone, or a zombie without memory
  ++reads_;
  std::error_code ec;
  const std::string exe = std::filesystem::read_symlink(dir + "/exe", ec).string();
  // The heap ledger (--ledger) defines malloc to count and forward each call:
  // the allocator behind it is the one judged.
  auto files = mapped_files(*text);
  std::erase_if(files, [](const std::string& f) { return base_name(f) == kLedgerLibraryName; });
  for (auto& h : other_heaps(files, exe))
    if (std::find(other_heaps_.begin(), other_heaps_.end(), h) == other_heaps_.end()) other_heaps_.push_back(h);
  std::sort(other_heaps_.begin(), other_heaps_.end());
  MapsVerdict v = judge_maps(files, exe, library_, elf_defines_malloc);
  if (!v.loaded) return false;
  verdict_ = v;
  if (!v.verified && failure_.empty()) failure_ = v.reason;
  return true;
}

bool MapsWatch::right_after_exec(double limit_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(int64_t(limit_ms * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    if (read_once()) return true;
    // Gone already: no memory map to read.
    if (access((root_ + "/" + std::to_string(pid_) + "/maps").c_str(), R_OK) != 0) break;
    auto text = procfs::read_text(root_ + "/" + std::to_string(pid_) + "/stat");
    if (!text || text->find(") Z") != std::string::npos) break;
  }
  return false;
}

void MapsWatch::check() { read_once(); }

void MapsWatch::apply(AllocatorRecord& a) const {
  a.verified_by = "maps";
  a.other_heaps = other_heaps_;
  if (!failure_.empty()) {
    a.verified = false;
    a.why_unverified = failure_;
    return;
  }
  a.verified = verdict_.verified;
  if (verdict_.verified) {
    a.served_by = verdict_.served_by;
    a.identified = a.family;
  } else {
    a.why_unverified = reads_ == 0 ? "the process exited before its memory map could be read: which malloc served it "
                                     "is not known"
                                   : verdict_.reason;
  }
}

}  // namespace mh
