// The run's memory cgroup (see memory_group.h).
#include "measure/memory_group.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "sys/cgroup.h"
#include "sys/interrupt.h"
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

std::string memory_high_why_not() { return cgroup::v2_memory_why_not(); }

namespace {

// Writes each (file, value) of a group in order; false with the first error.
bool write_files(const std::string& dir, std::initializer_list<std::pair<const char*, std::string>> files,
               std::string& error) {
  for (const auto& [file, value] : files)
    if (!cgroup::write_text(dir + "/" + file, value, error)) return false;
  return true;
}

std::optional<double> kb_of(const std::optional<std::string>& bytes_text) {
  if (!bytes_text) return std::nullopt;
  char* end = nullptr;
  const unsigned long long bytes = std::strtoull(bytes_text->c_str(), &end, 10);
  if (end == bytes_text->c_str()) return std::nullopt;
  return double(bytes / 1024);
}

std::optional<double> as_double(std::optional<int64_t> v) { return v ? std::optional<double>(double(*v)) : std::nullopt; }

}  // namespace

MemoryGroup::MemoryGroup(const MemoryGroupSettings& settings, const std::string& name) {
  // cgroup v2: a child of our own group, when the memory controller is
  // delegated to it. The run's containment (sys/containment.h) may have made
  // the group of that name already: a process is in one group of a
  // hierarchy, so both share it.
  if (const std::string why = cgroup::v2_memory_why_not(); why.empty()) make_v2_memory(settings, cgroup::own_dir("") + "/" + name);
  else if (!cgroup::v2_root().empty()) why_ = "cgroup v2: " + why;
  // cgroup v1: the memory hierarchy, when it is mounted and writable.
  if (memory_dir_.empty()) {
    if (const std::string parent = cgroup::own_dir("memory"); !parent.empty()) make_v1_memory(settings, parent + "/" + name);
  }
  if (memory_dir_.empty() && why_.empty()) why_ = "no cgroup memory controller is mounted";
  if (settings.high_bytes && !high_)
    why_ += std::string(why_.empty() ? "" : "; ") + "--memory-high needs cgroup v2's memory controller";
  make_pressure(name);
  if (!memory_dir_.empty()) exit_slots_[0] = interrupt::kill_cgroup_on_exit(memory_dir_, v2_);
  if (!pressure_dir_.empty() && pressure_dir_ != memory_dir_)
    exit_slots_[1] = interrupt::kill_cgroup_on_exit(pressure_dir_, true);
}

void MemoryGroup::make_v2_memory(const MemoryGroupSettings& settings, const std::string& dir) {
  std::string error;
  bool ok = cgroup::make(dir, error);
  if (ok && settings.max_bytes) ok = write_files(dir, {{"memory.max", std::to_string(settings.max_bytes)}}, error);
  if (ok && settings.high_bytes) ok = write_files(dir, {{"memory.high", std::to_string(settings.high_bytes)}}, error);
  // No swap for a limited group: the limit is on memory, not on memory and swap.
  if (ok && (settings.max_bytes || settings.high_bytes) && access((dir + "/memory.swap.max").c_str(), F_OK) == 0)
    ok = write_files(dir, {{"memory.swap.max", "0"}}, error);
  if (!ok) {
    cgroup::remove(dir, 0);
    why_ = "cgroup v2: " + error;
    return;
  }
  memory_dir_ = dir;
  v2_ = true;
  limited_ = settings.max_bytes > 0;
  high_ = settings.high_bytes > 0;
}

void MemoryGroup::make_v1_memory(const MemoryGroupSettings& settings, const std::string& dir) {
  std::string error;
  bool ok = cgroup::make(dir, error);
  if (ok && settings.max_bytes) ok = write_files(dir, {{"memory.limit_in_bytes", std::to_string(settings.max_bytes)}}, error);
  if (!ok) {
    cgroup::remove(dir, 0);
    why_ += (why_.empty() ? "" : "; ") + std::string("cgroup v1: ") + error;
    return;
  }
  // No swap for a limited group: swappiness 0 makes the group's own reclaim
  // scan file pages only. Not memory.memsw.limit_in_bytes: the kernel
  // charges memory+swap first, so with it equal to the limit every charge
  // fails there, and since Linux 6.15 memsw keeps no failcnt (only the
  // memory counter of a v1 group counts), so memory.failcnt would stay 0 at
  // the limit. memsw stays the fallback where swappiness cannot be set.
  std::string ignored;
  if (settings.max_bytes && !cgroup::write_text(dir + "/memory.swappiness", "0", ignored) &&
      access((dir + "/memory.memsw.limit_in_bytes").c_str(), F_OK) == 0)
    cgroup::write_text(dir + "/memory.memsw.limit_in_bytes", std::to_string(settings.max_bytes), ignored);
  memory_dir_ = dir;
  limited_ = settings.max_bytes > 0;
  why_.clear();
}

// The v2 group whose memory.pressure is the run's: the memory group under
// v2, else a group of the same name in the v2 hierarchy beside v1.
void MemoryGroup::make_pressure(const std::string& name) {
  if (v2_) {
    pressure_dir_ = memory_dir_;
  } else if (const std::string parent = cgroup::own_dir(""); parent.empty()) {
    pressure_why_ = "no cgroup v2 hierarchy is mounted (PSI is counted in a task's v2 group)";
    return;
  } else if (std::string error; cgroup::make(parent + "/" + name, error)) {
    pressure_dir_ = parent + "/" + name;
  } else {
    pressure_why_ = "no v2 group of the run's own: " + error;
    return;
  }
  if (access((pressure_dir_ + "/memory.pressure").c_str(), R_OK) != 0)
    pressure_why_ = "the kernel counts no memory pressure here (no " + pressure_dir_ +
                    "/memory.pressure: built without CONFIG_PSI, or booted with psi=0)";
}

MemoryGroup::~MemoryGroup() {
  for (int slot : exit_slots_) interrupt::forget_cgroup(slot);
  // The run's processes are reaped (or killed) by now; any left running
  // (--leftovers allow) go to our own group, so that the run's can go.
  std::string ignored;
  for (const auto& [dir, controller] : {std::pair{memory_dir_, v2_ ? "" : "memory"}, std::pair{pressure_dir_, ""}}) {
    if (dir.empty() || access(dir.c_str(), F_OK) != 0) continue;
    for (pid_t pid : cgroup::procs(dir)) cgroup::add(cgroup::own_dir(controller), pid, ignored);
    cgroup::remove(dir, 1.0);
  }
}

std::string MemoryGroup::limit_mechanism() const {
  return v2_ ? "cgroup v2 memory.max" : "cgroup v1 memory.limit_in_bytes";
}

bool MemoryGroup::add(pid_t pid, std::string& error) {
  const bool moved = (memory_dir_.empty() || cgroup::add(memory_dir_, pid, error)) &&
                     (pressure_dir_.empty() || pressure_dir_ == memory_dir_ || cgroup::add(pressure_dir_, pid, error));
  if (!moved) {
    add_error_ = "the run could not be moved into its cgroup: " + error;
    why_ = pressure_why_ = add_error_;
    return false;
  }
  if (pressure_why_.empty()) start_ = cgroup::parse_pressure(procfs::read_text(pressure_dir_ + "/memory.pressure").value_or(""));
  return true;
}

std::string MemoryGroup::memory_file(const char* v2_name, const char* v1_name) const {
  return memory_dir_ + "/" + (v2_ ? v2_name : v1_name);
}

std::optional<cgroup::PressureTotals> MemoryGroup::pressure_since_start() const {
  if (!pressure_why_.empty()) return std::nullopt;
  const auto text = procfs::read_text(pressure_dir_ + "/memory.pressure");
  if (!text) return std::nullopt;
  cgroup::PressureTotals now = cgroup::parse_pressure(*text);
  auto since = [](std::optional<uint64_t> a, std::optional<uint64_t> b) -> std::optional<uint64_t> {
    if (!a || !b || *a < *b) return a;
    return *a - *b;
  };
  return cgroup::PressureTotals{since(now.some_us, start_.some_us), since(now.full_us, start_.full_us)};
}

void MemoryGroup::sample(Sample& s) {
  auto& why = null_cells_;
  const auto kb = has_memory() && add_error_.empty() ? kb_of(procfs::read_text(memory_file("memory.current", "memory.usage_in_bytes")))
                               : std::nullopt;
  if (kb) s.cgroup_kb = int64_t(*kb);
  else {
    s.missing |= column_bit("cgroup_kb");
    why.emplace("cgroup_kb", has_memory() && add_error_.empty() ? "the memory group's charge could not be read" : why_);
  }
  const auto psi = pressure_since_start();
  for (auto [column, total] : {std::pair{"psi_some_ms", psi ? psi->some_us : std::nullopt},
                               std::pair{"psi_full_ms", psi ? psi->full_us : std::nullopt}}) {
    if (total) (column[4] == 's' ? s.psi_some_ms : s.psi_full_ms) = double(*total) / 1000;
    else {
      s.missing |= column_bit(column);
      why.emplace(column, pressure_why_.empty() ? "memory.pressure could not be read" : pressure_why_);
    }
  }
}

// v1: a charge fails at the memory counter (memory.failcnt) or, where a
// memory+swap limit is set, at that one first (memory.memsw.failcnt, which
// kernels before 6.15 count); the sum is the times the group hit its limit.
std::optional<int64_t> MemoryGroup::v1_failures() const {
  std::optional<int64_t> sum;
  for (const char* file : {"/memory.failcnt", "/memory.memsw.failcnt"}) {
    const auto text = procfs::read_text(memory_dir_ + file);
    const auto n = text ? cgroup::keyed_value("failcnt " + *text, "failcnt") : std::nullopt;
    if (n) sum = sum.value_or(0) + *n;
  }
  return sum;
}

int64_t MemoryGroup::oom_kills() const {
  if (memory_dir_.empty()) return 0;
  // Both files are "key value" lines; the key is oom_kill in both.
  return cgroup::keyed_value(procfs::read_text(memory_file("memory.events", "memory.oom_control")).value_or(""),
                             "oom_kill")
      .value_or(0);
}

namespace {

// A figure into the record, or its reason into unmeasured.
void put_metric(RunRecord& rec, const char* metric, std::optional<double>& field, std::optional<double> value,
         const std::string& why) {
  field = value;
  if (!value) rec.unmeasured[metric] = why;
}

}  // namespace

void MemoryGroup::record(RunRecord& rec) const {
  auto& f = rec.memory_group;
  const std::string none = add_error_.empty() ? "no memory cgroup of the run's own (" + why_ + ")" : add_error_;
  const bool own = has_memory() && add_error_.empty();
  const std::string events = own ? procfs::read_text(memory_file("memory.events", "memory.oom_control")).value_or("") : "";
  if (own) {
    put_metric(rec, "cgroup_peak_kb", f.peak_kb, kb_of(procfs::read_text(memory_file("memory.peak", "memory.max_usage_in_bytes"))),
        v2_ ? "the kernel has no memory.peak (it came with Linux 5.19)" : "memory.max_usage_in_bytes could not be read");
    put_metric(rec, "memory_high_events", f.high_events, v2_ ? as_double(cgroup::keyed_value(events, "high")) : std::nullopt,
        v2_ ? "memory.events could not be read" : "cgroup v1 has no memory.high, nor its events");
    const auto max = v2_ ? cgroup::keyed_value(events, "max") : v1_failures();
    put_metric(rec, "memory_max_events", f.max_events, as_double(max), "the group's limit events could not be read");
    put_metric(rec, "memory_oom_kills", f.oom_kills, as_double(cgroup::keyed_value(events, "oom_kill")),
        "the kernel does not count OOM kills per group here (no oom_kill line)");
  } else {
    for (auto [metric, field] : {std::pair{"cgroup_peak_kb", &f.peak_kb}, std::pair{"memory_high_events", &f.high_events},
                                 std::pair{"memory_max_events", &f.max_events}, std::pair{"memory_oom_kills", &f.oom_kills}})
      put_metric(rec, metric, *field, std::nullopt, none);
  }
  const auto psi = pressure_since_start();
  const std::string no_psi = pressure_why_.empty() ? "memory.pressure could not be read" : pressure_why_;
  auto ms = [](std::optional<uint64_t> us) { return us ? std::optional<double>(double(*us) / 1000) : std::nullopt; };
  put_metric(rec, "psi_some_ms", f.psi_some_ms, psi ? ms(psi->some_us) : std::nullopt, no_psi);
  put_metric(rec, "psi_full_ms", f.psi_full_ms, psi ? ms(psi->full_us) : std::nullopt, no_psi);
  auto& info = rec.memory_group_info;
  info["memory"] = own ? Json(v2_ ? "cgroup v2" : "cgroup v1") : Json(nullptr);
  info["pressure"] = pressure_why_.empty() ? Json("cgroup v2 memory.pressure") : Json(nullptr);
  if (!why_.empty()) info["memory_note"] = why_;
  if (!pressure_why_.empty()) info["pressure_note"] = pressure_why_;
}

Json memory_limit_json(uint64_t bytes, const std::string& mechanism, const std::string& note) {
  Json j{{"bytes", bytes}, {"mechanism", mechanism}};
  if (!note.empty()) j["note"] = note;
  return j;
}

}  // namespace mh
