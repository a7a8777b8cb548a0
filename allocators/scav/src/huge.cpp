// huge.cpp - direct mappings for blocks above 512 KiB and the cache of freed ones.
// Any thread; the cache is guarded by g_huge_lock, and munmap runs outside it.
#include "huge.h"

#include <cstring>

#include "debug.h"
#include "init.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "scavenger.h"
#include "secure.h"
#include "stats.h"

namespace scav {
namespace {

constexpr uint64_t kHugeMagic = 0x7363617648756765ull;  // "scavHuge"
constexpr uint64_t kHugeFreed = 0x7363617646726565ull;  // "scavFree": in the huge cache
constexpr unsigned kCacheSlots = 32;

// Sits right below the user pointer.
struct HugeHeader {
  uint64_t magic;
  uintptr_t base;  // the mapping
  size_t len;
  uint64_t pad;
};
static_assert(sizeof(HugeHeader) == 32);

struct CacheEntry {
  uintptr_t base;
  size_t len;
  uint64_t freed_ms;
};

// Mappings the cache dropped on their deadline (not evictions, not forced): a later
// mapping one of them would have served is a reuse the huge hold learns from.
struct Dropped {
  size_t len;  // 0: none, or already counted
  uint64_t ms;
  bool early;  // at the plain delay: the hold's budget was spent
};

Lock g_huge_lock;
CacheEntry g_cache[kCacheSlots];
unsigned g_cache_count = 0;
size_t g_cache_bytes = 0;
Dropped g_dropped[kCacheSlots];
unsigned g_dropped_next = 0;
std::atomic<uint64_t> g_huge_expire{0};

// The cache serves a request of len bytes from a mapping of l bytes: at most a
// quarter wasted.
bool fits(size_t l, size_t len) { return l >= len && l - len <= len / 4; }

size_t round_page(size_t n) { return (n + os::kPageSize - 1) & ~(os::kPageSize - 1); }

HugeHeader* header_of(const void* p) {
  auto* h = reinterpret_cast<HugeHeader*>(reinterpret_cast<uintptr_t>(p) - sizeof(HugeHeader));
  if (h->magic != kHugeMagic) {
    if (h->magic == kHugeFreed) pointer_fail("double free of", p);
    pointer_fail("invalid pointer (scav did not allocate it)", p);
  }
  return h;
}

// Take a cached mapping that fits len. On a miss, *dropped is the latest mapping
// that would have fitted among those the cache dropped on their deadline (ms 0: none).
bool cache_take(size_t len, uintptr_t* base, size_t* got, Dropped* dropped) {
  LockGuard g(g_huge_lock);
  int best = -1;
  for (unsigned i = 0; i < g_cache_count; i++) {
    size_t l = g_cache[i].len;
    if (fits(l, len) && (best < 0 || l < g_cache[best].len)) best = int(i);
  }
  if (best < 0) {
    int latest = -1;
    for (unsigned i = 0; i < kCacheSlots; i++)
      if (fits(g_dropped[i].len, len) && (latest < 0 || g_dropped[i].ms > g_dropped[latest].ms)) latest = int(i);
    if (latest >= 0) {
      *dropped = g_dropped[latest];
      g_dropped[latest].len = 0;
    }
    return false;
  }
  *base = g_cache[best].base;
  *got = g_cache[best].len;
  g_cache_bytes -= *got;
  g_cache[best] = g_cache[--g_cache_count];
  stat_add(g_stats.huge_cached, -int64_t(*got));
  return true;
}

void unmap_counted(uintptr_t base, size_t len, bool was_cached) {
  os::unmap(reinterpret_cast<void*>(base), len);
  stat_add(g_stats.os_munmaps, 1);
  if (was_cached) stat_add(g_stats.purged, len);
}

}  // namespace

void* huge_alloc(size_t size, size_t align, bool* zeroed) {
  process_init();  // a first allocation may come here directly (posix_memalign, calloc)
  if (align < 64) align = 64;
  size_t pad = align == 64 ? 64 : align;  // room for the header below an aligned p
  if (size > (size_t(1) << 62) || size + pad < size) return nullptr;
  size_t len = round_page(size + pad);
  uintptr_t base;
  size_t got = len;
  bool zero = false;
  Dropped dropped{0, 0, false};
  if (!(align <= os::kPageSize && cache_take(len, &base, &got, &dropped))) {
    if (dropped.ms) purge_note_reuse(HoldKind::kHuge, os::now_ms(), dropped.ms, dropped.early, len);
    void* mem;
    if (os::map_fresh(len, &mem)) return nullptr;
    stat_add(g_stats.os_mmaps, 1);
    base = reinterpret_cast<uintptr_t>(mem);
    zero = true;
  }
  uintptr_t p = (base + sizeof(HugeHeader) + align - 1) & ~(uintptr_t(align) - 1);
  SCAV_ASSERT(p + size <= base + got);
  auto* h = reinterpret_cast<HugeHeader*>(p - sizeof(HugeHeader));
  h->magic = kHugeMagic;
  h->base = base;
  h->len = got;
  stat_add(g_stats.huge_bytes, got);
  stat_add(g_stats.huge_blocks, 1);
  if (zeroed) *zeroed = zero;
  return reinterpret_cast<void*>(p);
}

size_t huge_usable(const void* p) {
  HugeHeader* h = header_of(p);
  return h->base + h->len - reinterpret_cast<uintptr_t>(p);
}

void huge_check(const void* p) {
  if (reinterpret_cast<uintptr_t>(p) % 64 != 0) pointer_fail("invalid pointer (scav did not allocate it)", p);
  header_of(p);
}

void huge_free(void* p) {
  if (SCAV_UNLIKELY(secure_on())) huge_check(p);
  HugeHeader* h = header_of(p);
  uintptr_t base = h->base;
  size_t len = h->len;
  h->magic = kHugeFreed;
  stat_add(g_stats.huge_bytes, -int64_t(len));
  stat_add(g_stats.huge_blocks, -1);
  hold_note_release(HoldKind::kHuge, len, os::now_ms());
  size_t cap = size_t(option(Opt::kHugeCache));
  if (len > cap / 4 || cap == 0) {  // too big to be worth keeping
    unmap_counted(base, len, false);
    return;
  }
  CacheEntry evicted[kCacheSlots + 1];
  unsigned nev = 0;
  {
    LockGuard g(g_huge_lock);
    // Make room: the oldest entries go first.
    while (g_cache_count && (g_cache_count == kCacheSlots || g_cache_bytes + len > cap)) {
      unsigned oldest = 0;
      for (unsigned i = 1; i < g_cache_count; i++)
        if (g_cache[i].freed_ms < g_cache[oldest].freed_ms) oldest = i;
      evicted[nev++] = g_cache[oldest];
      g_cache_bytes -= g_cache[oldest].len;
      g_cache[oldest] = g_cache[--g_cache_count];
    }
    g_cache[g_cache_count++] = CacheEntry{base, len, os::now_ms()};
    g_cache_bytes += len;
  }
  stat_add(g_stats.huge_cached, int64_t(len));
  // Count the purge before the cache shrinks: whoever sees the cache empty also sees
  // the bytes purged.
  for (unsigned i = 0; i < nev; i++) {
    unmap_counted(evicted[i].base, evicted[i].len, true);
    stat_add(g_stats.huge_cached, -int64_t(evicted[i].len));
  }
  purge_arm(g_huge_expire, purge_deadline_from_now());
}

void* huge_realloc(void* p, size_t size) {
  HugeHeader* h = header_of(p);
  uintptr_t off = reinterpret_cast<uintptr_t>(p) - h->base;
  if (size > (size_t(1) << 62)) return nullptr;
  size_t len = round_page(off + size);
  size_t old = h->len;
  if (len == old) return p;
  // Shrinking by less than a quarter is not worth a system call.
  if (len < old && old - len <= old / 4) return p;
  void* nb;
  if (os::remap(reinterpret_cast<void*>(h->base), old, len, &nb)) return nullptr;
  uintptr_t np = reinterpret_cast<uintptr_t>(nb) + off;
  auto* nh = reinterpret_cast<HugeHeader*>(np - sizeof(HugeHeader));
  nh->base = reinterpret_cast<uintptr_t>(nb);
  nh->len = len;
  stat_add(g_stats.huge_bytes, int64_t(len) - int64_t(old));
  return reinterpret_cast<void*>(np);
}

uint64_t huge_purge(bool force, uint64_t now) {
  uint64_t e = g_huge_expire.load(std::memory_order_seq_cst);
  if (!force && (e == 0 || e > now)) return 0;
  g_huge_expire.exchange(0, std::memory_order_seq_cst);
  // The huge cache's own hold and budget: the arena's would keep a churn of large
  // buffers' whole cache a hold longer after it stops, for nothing.
  const uint64_t plain = purge_delay_ms();
  const uint64_t hold = force ? 0 : purge_hold_ms(HoldKind::kHuge);
  uint64_t budget = force ? 0 : hold_budget_bytes(HoldKind::kHuge, now), kept = 0;
  CacheEntry out[kCacheSlots];
  unsigned n = 0;
  uint64_t next = 0;
  auto want = [&](uint64_t t) { next = earlier_deadline(next, t); };
  {
    LockGuard g(g_huge_lock);
    // The latest freed first: they are the likeliest to be taken again.
    for (unsigned i = 1; i < g_cache_count; i++)
      for (unsigned j = i; j > 0 && g_cache[j - 1].freed_ms < g_cache[j].freed_ms; j--) {
        CacheEntry t = g_cache[j];
        g_cache[j] = g_cache[j - 1];
        g_cache[j - 1] = t;
      }
    for (unsigned i = 0; i < g_cache_count;) {
      const uint64_t due = g_cache[i].freed_ms + plain;
      const bool held = hold && now < due + hold;
      if (!force && due > now) {
        want(due);
        i++;
      } else if (held && g_cache[i].len <= budget) {
        budget -= g_cache[i].len;
        kept += g_cache[i].len;
        want(due + hold);
        i++;
      } else {
        if (!force) {
          g_dropped[g_dropped_next] = Dropped{g_cache[i].len, now ? now : 1, held};
          g_dropped_next = (g_dropped_next + 1) % kCacheSlots;
        }
        out[n++] = g_cache[i];
        g_cache_bytes -= g_cache[i].len;
        for (unsigned j = i + 1; j < g_cache_count; j++) g_cache[j - 1] = g_cache[j];
        g_cache_count--;
      }
    }
  }
  if (!force) g_stats.hold_kept[unsigned(HoldKind::kHuge)].store(kept, std::memory_order_relaxed);
  uint64_t total = 0;
  for (unsigned i = 0; i < n; i++) {
    unmap_counted(out[i].base, out[i].len, true);
    stat_add(g_stats.huge_cached, -int64_t(out[i].len));
    total += out[i].len;
  }
  if (next) purge_arm(g_huge_expire, next);
  return total;
}

uint64_t huge_earliest_expire() {
  uint64_t e = 0;
  g_huge_expire.compare_exchange_strong(e, 0, std::memory_order_seq_cst);
  return e;
}

void huge_lock() { g_huge_lock.lock(); }
void huge_unlock() { g_huge_lock.unlock(); }
void huge_reset_lock() { g_huge_lock.reset(); }

}  // namespace scav
