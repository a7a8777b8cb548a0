// Reading the heap ledger of another process (see heap_ledger.h).
#include "sys/heap_ledger.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <memharness/ledger.h>

#include "sys/elf_symbols.h"
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
std::optional<uint64_t> load_base(std::string_view maps, const std::string& library) {
  std::optional<uint64_t> base;
  procfs::for_each_line(maps, [&](std::string_view line) {
    if (base || !line.ends_with(library)) return;
    // start-end perms offset dev inode path
    unsigned long long start = 0, end = 0, offset = 0;
    char perms[8] = {};
    const std::string l(line);
    if (std::sscanf(l.c_str(), "%llx-%llx %7s %llx", &start, &end, perms, &offset) == 4 && offset == 0) base = start;
  });
  return base;
}

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

HeapFrame frame_of(const std::vector<Mapping>& maps, uint64_t ip) {
  for (const auto& m : maps)
    if (ip >= m.start && ip < m.end) return {m.path, ip - m.base};
  return {"[anonymous]", ip};
}

struct SiteSum {
  double bytes = 0, var = 0;
  int64_t samples = 0;
};

void add_to(HeapSite& site, const SiteSum& sum) {
  site.bytes += sum.bytes;
  site.stderr_bytes = std::sqrt(site.stderr_bytes * site.stderr_bytes + sum.var);
  site.samples += sum.samples;
}

}  // namespace

std::optional<HeapSites> LedgerReader::sites(size_t top) {
  memharness_ledger head{};
  if (!read_head(head)) return std::nullopt;
  if (head.sample_interval == 0 || head.blocks == 0) {
    why_ = "the process samples no allocations (MEMHARNESS_LEDGER_SAMPLE=0)";
    return std::nullopt;
  }
  return fold(head, top);
}

std::optional<HeapSites> LedgerReader::fold(const memharness_ledger& head, size_t top) {
  std::vector<memharness_ledger_block> blocks(MEMHARNESS_LEDGER_BLOCKS);
  const uint32_t n_stacks = std::min(head.stacks_used, MEMHARNESS_LEDGER_STACKS);
  std::vector<memharness_ledger_stack> stacks(n_stacks);
  if (!read_block(head.blocks, blocks.data(), blocks.size() * sizeof blocks[0]) ||
      (n_stacks && !read_block(head.stacks, stacks.data(), stacks.size() * sizeof stacks[0])))
    return std::nullopt;
  // Each live block (a slot being written is skipped: its stack is out of range).
  std::vector<SiteSum> by_stack(n_stacks);
  for (const auto& b : blocks) {
    if (b.addr <= MEMHARNESS_LEDGER_GONE || b.stack >= n_stacks) continue;
    auto& s = by_stack[b.stack];
    s.bytes += b.weight;
    s.var += b.weight * (b.weight - double(b.size));
    ++s.samples;
  }
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < n_stacks; ++i)
    if (by_stack[i].samples) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return by_stack[a].bytes > by_stack[b].bytes; });
  const auto maps = procfs::read_text(root_ + "/" + std::to_string(pid_) + "/maps");
  const auto mappings = file_mappings(maps ? *maps : "");
  HeapSites out;
  out.interval_bytes = head.sample_interval;
  out.dropped = head.dropped;
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& sum = by_stack[order[k]];
    if (k >= top) {
      add_to(out.rest, sum);
      ++out.rest_sites;
      continue;
    }
    HeapSite site;
    add_to(site, sum);
    const auto& st = stacks[order[k]];
    for (uint32_t f = 0; f < std::min(st.depth, MEMHARNESS_LEDGER_FRAMES); ++f)
      site.frames.push_back(frame_of(mappings, st.frame[f]));
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

bool LedgerReader::read_head(memharness_ledger& head) {
  constexpr size_t kHead = offsetof(memharness_ledger, slot);
  // Twice at most: a block that moved (an exec) is found again once.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (addr_ == 0 && !locate()) return false;
    if (read_block(addr_, &head, kHead) && std::memcmp(head.magic, MEMHARNESS_LEDGER_MAGIC, sizeof head.magic) == 0 &&
        head.version == MEMHARNESS_LEDGER_VERSION && head.pid == pid_ &&
        head.slots_used <= MEMHARNESS_LEDGER_SLOTS)
      break;
    if (why_.empty() || why_ == "not read yet") why_ = "no ledger counters of this process at the symbol's address";
    addr_ = 0;
    next_locate_ = {};
    if (attempt == 1) return false;
  }
  return true;
}

std::optional<LedgerCounts> LedgerReader::read(bool look_now) {
  if (look_now) next_locate_ = {};
  memharness_ledger head{};
  constexpr size_t kHead = offsetof(memharness_ledger, slot);
  if (!read_head(head)) return std::nullopt;
  const size_t n = std::max<uint32_t>(head.slots_used, 1);
  slots_.resize(n * sizeof(memharness_ledger_slot));
  if (!read_block(addr_ + kHead, slots_.data(), slots_.size())) return std::nullopt;
  LedgerCounts c;
  for (size_t i = 0; i < n; ++i) {
    memharness_ledger_slot s;
    std::memcpy(&s, slots_.data() + i * sizeof s, sizeof s);
    c.live_bytes += s.live_bytes;
    c.live_blocks += s.live_blocks;
    c.allocs += s.allocs;
    c.alloc_bytes += s.alloc_bytes;
  }
  why_.clear();
  return c;
}

}  // namespace mh
