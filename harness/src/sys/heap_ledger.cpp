// Reading the heap ledger of another process (see heap_ledger.h).
#include "sys/heap_ledger.h"

#include <sys/uio.h>

#include <cerrno>
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
  static std::map<std::string, std::optional<uint64_t>> known;
  static std::map<std::string, std::string> reasons;
  auto it = known.find(library);
  if (it == known.end()) {
    std::string w;
    it = known.emplace(library, dynamic_symbol_value(library, "memharness_ledger", w)).first;
    reasons[library] = w;
  }
  if (!it->second) why = library + ": " + reasons[library];
  return it->second;
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

}  // namespace

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

std::optional<LedgerCounts> LedgerReader::read(bool look_now) {
  if (look_now) next_locate_ = {};
  memharness_ledger head{};
  constexpr size_t kHead = offsetof(memharness_ledger, slot);
  // Twice at most: a block that moved (an exec) is found again once.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (addr_ == 0 && !locate()) return std::nullopt;
    if (read_block(addr_, &head, kHead) && std::memcmp(head.magic, MEMHARNESS_LEDGER_MAGIC, sizeof head.magic) == 0 &&
        head.version == MEMHARNESS_LEDGER_VERSION && head.pid == pid_ &&
        head.slots_used <= MEMHARNESS_LEDGER_SLOTS)
      break;
    if (why_.empty() || why_ == "not read yet") why_ = "no ledger counters of this process at the symbol's address";
    addr_ = 0;
    next_locate_ = {};
    if (attempt == 1) return std::nullopt;
  }
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
