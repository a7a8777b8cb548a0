// Reading the heap ledger of another process (see heap_ledger.h).
#include "sys/heap_ledger.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <memharness/ledger.h>

#include <fmt/format.h>

#include "core/escape.h"
#include "sys/elf_symbols.h"
#include "sys/json_read.h"
#include "sys/procfs.h"

namespace mh {

namespace {

// A process without the ledger is looked at again this often, not at every
// sample: each look reads its whole maps file.
constexpr auto kLocateGap = std::chrono::milliseconds(20);

// The counter block's offset in the library, read once per library file.
std::optional<uint64_t> symbol_offset(const std::string& library, std::string& why) {
  struct Found {
    std::optional<uint64_t> offset;
    std::string why_not;
  };
  static std::map<std::string, Found> known;
  auto it = known.find(library);
  if (it == known.end()) {
    Found f;
    f.offset = dynamic_symbol_value(library, "memharness_ledger", f.why_not);
    it = known.emplace(library, std::move(f)).first;
  }
  if (!it->second.offset) why = library + ": " + it->second.why_not;
  return it->second.offset;
}

// The start of the library's first mapping (file offset 0) in maps text.
struct Mapping {
  uint64_t start, end, base;  // base: where the file's offset 0 is
  std::string path;
};

// The file-backed mappings of maps text, each with its file's load base.
std::vector<Mapping> file_mappings(std::string_view maps) {
  std::vector<Mapping> out;
  procfs::for_each_line(maps, [&](std::string_view line) {
    unsigned long long start = 0, end = 0, offset = 0;
    char perms[8] = {};
    int path_at = 0;
    const std::string l(line);
    if (std::sscanf(l.c_str(), "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &path_at) < 4 ||
        path_at == 0 || size_t(path_at) >= l.size())
      return;
    out.push_back({start, end, start - offset, l.substr(size_t(path_at))});
  });
  return out;
}

// Where `library` is loaded: the start of its mapping at file offset 0.
std::optional<uint64_t> load_base(std::string_view maps, const std::string& library) {
  for (const auto& m : file_mappings(maps))
    if (m.path == library && m.start == m.base) return m.start;
  return std::nullopt;
}

HeapFrame frame_of(const std::vector<Mapping>& maps, uint64_t ip) {
  for (const auto& m : maps)
    if (ip >= m.start && ip < m.end) return {escape::identity(m.path), ip - m.base};
  return {"[anonymous]", ip};
}

// Adds a stack's sums to a site; false when the sums, or the site with them,
// leave the range a report holds for a site (kMaxHeapBytes bytes, a count
// that is an int64_t): the process wrote over its tables.
bool add_to(HeapSite& site, const memharness_ledger_site& sum) {
  auto bytes_ok = [](double v) { return std::isfinite(v) && v >= 0 && v <= kMaxHeapBytes; };
  if (!bytes_ok(sum.bytes) || !std::isfinite(sum.var) || sum.samples < 0) return false;
  site.bytes += sum.bytes;
  site.stderr_bytes = std::sqrt(site.stderr_bytes * site.stderr_bytes + std::max(sum.var, 0.0));
  return !__builtin_add_overflow(site.samples, sum.samples, &site.samples) && bytes_ok(site.bytes) &&
         bytes_ok(site.stderr_bytes);
}

// Why the head's figures that a report keeps of the sites are out of its
// range ("" when they are within).
std::string head_out_of_range(const memharness_ledger& head, bool peak) {
  constexpr uint64_t kMax = INT64_MAX;
  if (head.sample_interval > kMax) return "sampling interval";
  if (head.dropped > kMax) return "count of dropped samples";
  if (peak && head.snapshots > kMax) return "count of snapshots";
  if (peak && head.peak_live_bytes == INT64_MIN) return "live heap of its peak snapshot";
  return "";
}



// The first `heaviest` of `order` (sorted by bytes), then up to `extra` of
// the rest that `keep` names, in their order: moved to the front of `order`.
// The heaviest join `keep`. Returns how many are at the front.
size_t keep_earlier_sites(std::vector<uint32_t>& order, size_t heaviest, size_t extra, std::vector<bool>* keep) {
  if (!keep) return heaviest;
  size_t front = heaviest;
  for (size_t k = heaviest; k < order.size() && front < heaviest + extra; ++k)
    if (order[k] < keep->size() && (*keep)[order[k]]) std::rotate(order.begin() + front++, order.begin() + k, order.begin() + k + 1);
  for (size_t k = 0; k < heaviest; ++k) {
    if (order[k] >= keep->size()) keep->resize(order[k] + 1);
    (*keep)[order[k]] = true;
  }
  return front;
}

// Tries at a table that keeps changing (every allocation sampled): then it is
// read as it stands, each entry's fields torn at worst by one block.
constexpr int kSumsTries = 8;

}  // namespace

void LedgerReader::refuse(const std::string& what) {
  why_ = "the heap ledger's " + what + " out of the range a report holds (the process wrote over its tables)";
  refused_.push_back(why_);
}

std::optional<HeapSites> LedgerReader::peak_sites(size_t top) {
  refused_.clear();
  return snapshot_sites(top, read_maps());
}

LedgerReader::MarkSites LedgerReader::sites_and_peak(size_t top) {
  refused_.clear();
  const std::string maps = read_maps();
  return {live_sites(top, maps), snapshot_sites(top, maps)};
}

std::string LedgerReader::read_maps() const {
  return procfs::read_text(root_ + "/" + std::to_string(pid_) + "/maps").value_or("");
}

std::optional<HeapSites> LedgerReader::live_sites(size_t top, std::string_view maps) {
  memharness_ledger head{};
  std::vector<memharness_ledger_site> sums;
  if (!read_sums(head, false, sums)) return std::nullopt;
  return fold(head, sums, top, maps, &kept_at_marks_);
}

std::optional<HeapSites> LedgerReader::snapshot_sites(size_t top, std::string_view maps) {
  memharness_ledger head{};
  std::vector<memharness_ledger_site> sums;
  if (!read_sums(head, true, sums)) return std::nullopt;
  if (head.snapshots == 0) {
    why_ = "the ledger took no peak snapshot (no sampled allocation yet)";
    return std::nullopt;
  }
  auto out = fold(head, sums, top, maps);
  if (out) {
    out->heap_live_bytes = head.peak_live_bytes;
    out->snapshots = head.snapshots;
  }
  return out;
}

bool LedgerReader::read_sums(memharness_ledger& head, bool peak, std::vector<memharness_ledger_site>& sums) {
  const size_t seq_at = peak ? offsetof(memharness_ledger, peak_seq) : offsetof(memharness_ledger, sites_seq);
  for (int attempt = 0; attempt < kSumsTries; ++attempt) {
    if (!read_head(head)) return false;
    if (head.sample_interval == 0 || head.sites == 0) {
      why_ = "the process samples no allocations (MEMHARNESS_LEDGER_SAMPLE=0)";
      return false;
    }
    const uint64_t seq = peak ? head.peak_seq : head.sites_seq;
    sums.resize(std::min(peak ? head.peak_stacks : head.stacks_used, MEMHARNESS_LEDGER_STACKS));
    uint64_t seq_after = 0;
    if ((!sums.empty() && !read_block(peak ? head.peak_sites : head.sites, sums.data(), sums.size() * sizeof sums[0])) ||
        !read_block(addr_ + seq_at, &seq_after, sizeof seq_after))
      return false;
    if (seq % 2 == 0 && seq_after == seq) break;
  }
  if (const std::string bad = head_out_of_range(head, peak); !bad.empty()) {
    refuse(bad + " is");
    return false;
  }
  return true;
}

std::optional<HeapSites> LedgerReader::fold(const memharness_ledger& head, const std::vector<memharness_ledger_site>& sums,
                                            size_t top, std::string_view maps, std::vector<bool>* keep) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < sums.size(); ++i) {
    // Checked before the sort, which a NaN would leave without an order.
    if (sums[i].samples < 0 || !(sums[i].bytes >= 0 && sums[i].bytes <= kMaxHeapBytes)) {
      refuse("call-site sums are");
      return std::nullopt;
    }
    if (sums[i].samples > 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return sums[a].bytes > sums[b].bytes; });
  const size_t shown = keep_earlier_sites(order, std::min(top, order.size()), top, keep);
  // Only the stacks shown are read: one read of their entries of the stack table.
  std::vector<memharness_ledger_stack> stacks(shown);
  std::vector<iovec> local(shown), remote(shown);
  for (size_t k = 0; k < shown; ++k) {
    local[k] = {&stacks[k], sizeof stacks[k]};
    remote[k] = {reinterpret_cast<void*>(head.stacks + order[k] * sizeof stacks[k]), sizeof stacks[k]};
  }
  const ssize_t want = ssize_t(shown * sizeof(memharness_ledger_stack));
  if (shown && process_vm_readv(pid_, local.data(), shown, remote.data(), shown, 0) != want) {
    why_ = std::string("process_vm_readv of the stack table: ") + std::strerror(errno);
    return std::nullopt;
  }
  const auto mappings = file_mappings(maps);
  HeapSites out;
  out.interval_bytes = head.sample_interval;
  out.dropped = head.dropped;
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& sum = sums[order[k]];
    HeapSite site;
    if (!add_to(k >= shown ? out.rest : site, sum)) {
      refuse("call-site sums are");
      return std::nullopt;
    }
    if (k >= shown) {
      ++out.rest_sites;
      continue;
    }
    for (uint32_t f = 0; f < std::min(stacks[k].depth, MEMHARNESS_LEDGER_FRAMES); ++f)
      site.frames.push_back(frame_of(mappings, stacks[k].frame[f]));
    out.top.push_back(std::move(site));
  }
  return out;
}

LedgerReader::LedgerReader(int pid, std::string library, std::string proc_root)
    : pid_(pid), library_(std::move(library)), root_(std::move(proc_root)) {
  why_ = "not read yet";
}

bool LedgerReader::locate() {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_locate_) return false;
  next_locate_ = now + kLocateGap;
  const auto offset = symbol_offset(library_, why_);
  if (!offset) return false;
  const auto maps = procfs::read_text(root_ + "/" + std::to_string(pid_) + "/maps");
  if (!maps || maps->empty()) {
    why_ = "the process has no memory map (it ended)";
    return false;
  }
  const auto base = load_base(*maps, library_);
  if (!base) {
    why_ = library_ + " is not mapped in the process (not started with the ledger, or it cleared LD_PRELOAD)";
    return false;
  }
  addr_ = *base + *offset;
  return true;
}

bool LedgerReader::read_block(uint64_t addr, void* out, size_t len) {
  iovec local{out, len}, remote{reinterpret_cast<void*>(addr), len};
  const ssize_t n = process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  if (n == static_cast<ssize_t>(len)) return true;
  why_ = std::string("process_vm_readv: ") + (n < 0 ? std::strerror(errno) : "short read");
  return false;
}

namespace {

// Why a head read at the symbol's address is not this process's ledger of
// this layout ("" when it is).
std::string head_mismatch(const memharness_ledger& head, int pid) {
  if (std::memcmp(head.magic, MEMHARNESS_LEDGER_MAGIC, sizeof head.magic) != 0)
    return "no ledger counters of this process at the symbol's address";
  if (head.version != MEMHARNESS_LEDGER_VERSION)
    return fmt::format("the ledger in the process has layout version {}, this harness reads version {} only (the "
                       "ledger library comes from another build of memharness)",
                       head.version, MEMHARNESS_LEDGER_VERSION);
  if (head.pid != pid) return fmt::format("the ledger's counters are those of process {}, not of {}", head.pid, pid);
  if (head.slots_used > MEMHARNESS_LEDGER_SLOTS)
    return fmt::format("the ledger claims {} thread slots, more than its {}", head.slots_used, MEMHARNESS_LEDGER_SLOTS);
  return "";
}

}  // namespace

bool LedgerReader::read_head(memharness_ledger& head) {
  constexpr size_t kHead = offsetof(memharness_ledger, slot);
  // Twice at most: a block that moved (an exec) is found again once.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (addr_ == 0 && !locate()) return false;
    if (!read_block(addr_, &head, kHead)) {
      addr_ = 0;
      next_locate_ = {};
      continue;
    }
    why_ = head_mismatch(head, pid_);
    if (why_.empty()) return true;
    addr_ = 0;
    next_locate_ = {};
  }
  return false;
}

std::optional<LedgerCounts> LedgerReader::read(bool look_now) {
  if (look_now) next_locate_ = {};
  memharness_ledger head{};
  constexpr size_t kHead = offsetof(memharness_ledger, slot);
  if (!read_head(head)) return std::nullopt;
  const size_t n = std::max<uint32_t>(head.slots_used, 1);
  slots_.resize(n * sizeof(memharness_ledger_slot));
  if (!read_block(addr_ + kHead, slots_.data(), slots_.size())) return std::nullopt;
  // Summed wide: 256 slots of any value do not overflow 128 bits.
  __int128 live_bytes = 0, live_blocks = 0, allocs = 0;
  for (size_t i = 0; i < n; ++i) {
    memharness_ledger_slot s;
    std::memcpy(&s, slots_.data() + i * sizeof s, sizeof s);
    live_bytes += s.live_bytes;
    live_blocks += s.live_blocks;
    allocs += s.allocs;
  }
  auto within = [](__int128 v, int64_t max) { return v >= 0 && v <= max ? std::optional<int64_t>(int64_t(v)) : std::nullopt; };
  LedgerCounts c;
  c.live_bytes = within(live_bytes, kMaxKb * 1024);
  c.live_blocks = within(live_blocks, kMaxCount);
  c.allocs = within(allocs, kMaxCount);
  why_.clear();
  return c;
}

}  // namespace mh
