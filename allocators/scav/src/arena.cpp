// arena.cpp - reserving arenas, finding and releasing slice runs, purging free ranges.
// Arenas are shared by all threads: the bitmaps of one arena are touched only under its
// lock, the address map and the arena list are append-only and read without locks.
#include "arena.h"

#include <cerrno>

#include "debug.h"
#include "options.h"
#include "os.h"
#include "scavenger.h"
#include "secure.h"
#include "stats.h"

namespace scav {

alignas(128) constinit Page g_released_page{};
Arena* g_arena_map[kArenaMapSize];
uintptr_t* g_slice_map[kArenaMapSize];
Arena* g_arenas[kMaxArenas];
std::atomic<uint32_t> g_arena_count{0};

namespace {

Lock g_arena_create_lock;

uint64_t run_mask(unsigned bit, unsigned n) {
  return n == 64 ? ~uint64_t(0) : (((uint64_t(1) << n) - 1) << bit);
}

#ifdef SCAV_DEBUG
void arena_check(const Arena* a) {
  for (uint32_t w = 0; w < a->word_count; w++) {
    SCAV_ASSERT((a->pending_bits[w] & ~a->free_bits[w]) == 0);
    SCAV_ASSERT((a->pending_bits[w] & ~a->committed_bits[w]) == 0);
    SCAV_ASSERT((a->purged_bits[w] & (a->committed_bits[w] | ~a->free_bits[w])) == 0);
  }
}
#else
inline void arena_check(const Arena*) {}
#endif

// Collapses: at most kCollapseBurst at once, then one per kCollapseTickMs (8 a
// second). A collapse copies 2 MiB with the process's mmap lock taken (0.5-4 ms of a
// core here, against 3-6 ms for the 512 small page faults that made the region
// resident), so a heap that grows costs the scavenger about 1% of a core at most.
constexpr unsigned kCollapseBurst = 8;
constexpr uint64_t kCollapseTickMs = 125;
// A region with more OS pages absent than this stays as it is: a collapse makes
// them resident (64 KiB of 2 MiB).
constexpr size_t kCollapseMaxAbsent = 16;
// Looks at a region that was in use but not resident enough, a quarter of
// thp_collapse_ms apart, before it waits to fill again (a page's blocks are carved as
// they are needed, so the pages that were current when it filled become resident as
// the program goes on).
constexpr unsigned kCollapseTries = 8;
std::atomic<bool> g_collapse_unsupported{false};  // the kernel said EINVAL
// Under the purge guard.
unsigned g_collapse_tokens = kCollapseBurst;
uint64_t g_collapse_tick = 0;

// Region r's bits in its bitmap word.
uint64_t region_mask(uint32_t r) { return run_mask(r % 2 * kRegionSlices, kRegionSlices); }
bool region_dense(const Arena* a, uint32_t r) { return (a->free_bits[r / 2] & region_mask(r)) == 0; }
// The meta area's regions are never looked at: they are in use but sparsely touched.
uint32_t first_data_region(const Arena* a) { return (a->meta_slices + kRegionSlices - 1) / kRegionSlices; }

[[gnu::cold]] void region_split(Arena* a, uint32_t r) {
  if (!a->regions[r].huge) return;
  a->regions[r].huge = 0;
  stat_add(g_stats.thp_collapsed_bytes, -int64_t(kRegionSize));
}

// A region's look, under a's lock: look_bits has a bit per region with a due time, so
// that a pass reads the entries of those alone (each OS page of them is touched only
// where regions filled).
void look_set(Arena* a, uint32_t r) { a->look_bits[r / 64] |= uint64_t(1) << (r % 64); }
void look_clear(Arena* a, uint32_t r) {
  a->regions[r].due = 0;
  a->look_bits[r / 64] &= ~(uint64_t(1) << (r % 64));
}

// Under a's lock, after a page took slices [s, s+n): a region it filled gets a look
// thp_collapse_ms later.
[[gnu::cold]] void regions_note_filled(Arena* a, uint32_t s, uint32_t n) {
  if (!collapse_enabled()) return;
  uint64_t due = 0;
  for (uint32_t r = s / kRegionSlices; r <= (s + n - 1) / kRegionSlices; r++) {
    Region& g = a->regions[r];
    if (g.huge || g.due || r < first_data_region(a) || !region_dense(a, r)) continue;
    if (!due) due = os::now_ms() + uint64_t(option(Opt::kThpCollapseMs));
    g.due = due;
    g.tries = 0;
    look_set(a, r);
  }
}

// Collapse region r (claimed: its look cleared) if it is resident enough; else look
// again later, at most kCollapseTries times.
[[gnu::cold]] void region_collapse(Arena* a, uint32_t r, uint64_t now) {
  void* p = reinterpret_cast<void*>(a->base + (uintptr_t(r) << kRegionShift));
  unsigned char vec[kRegionSize / os::kPageSize];
  size_t present = 0;
  int e = os::resident_pages(p, kRegionSize, vec, &present);
  const size_t absent = kRegionSize / os::kPageSize - present;
  if (!e && absent <= kCollapseMaxAbsent) {
    e = os::collapse_huge(p, kRegionSize);
    if (e == EINVAL) g_collapse_unsupported.store(true, std::memory_order_relaxed);
    if (e) {
      stat_add(g_stats.thp_collapse_failures, 1);
      return;
    }
    g_collapse_tokens--;
    stat_add(g_stats.thp_collapses, 1);
    stat_add(g_stats.thp_collapse_added, absent * os::kPageSize);
    stat_add(g_stats.thp_collapsed_bytes, int64_t(kRegionSize));
    LockGuard g(a->lock);
    a->regions[r].huge = 1;
    return;
  }
  stat_add(g_stats.thp_collapse_skips, 1);
  LockGuard g(a->lock);
  Region& reg = a->regions[r];
  if (e || reg.due || reg.tries >= kCollapseTries || !region_dense(a, r)) return;
  reg.tries++;
  reg.due = now + uint64_t(option(Opt::kThpCollapseMs)) / 4 + 1;
  look_set(a, r);
}

// The regions' part of a scavenger's pass over arena a (see arenas_purge).
[[gnu::cold]] void regions_collapse(Arena* a, uint64_t now) {
  if (now >= g_collapse_tick + kCollapseTickMs) {
    uint64_t ticks = (now - g_collapse_tick) / kCollapseTickMs;
    g_collapse_tokens = ticks >= kCollapseBurst - g_collapse_tokens ? kCollapseBurst : g_collapse_tokens + unsigned(ticks);
    g_collapse_tick = now;
  }
  // A heap shrinking (scavenger.h: more than kShrinkBytes released within a delay)
  // is giving memory back, not settling into a live set: its looks wait, and the
  // scavenger's passes go to purging (with collapses at 100 ms, churn-threads' RSS
  // 100 ms after its end doubled without this).
  const uint64_t since = uint64_t(option(Opt::kThpCollapseMs));
  if (hold_off_since(now > since ? now - since : 0)) return;
  // Looks that find too little resident cost a mincore each and no token, so a pass
  // takes up to kLooksPerPass of them and collapses while its tokens last.
  constexpr unsigned kLooksPerPass = 4 * kCollapseBurst;
  uint32_t claimed[kLooksPerPass];
  unsigned n = 0;
  {
    LockGuard g(a->lock);
    const uint32_t words = (a->slice_count / kRegionSlices + 63) / 64;
    for (uint32_t w = 0; w < words; w++) {
      for (uint64_t bits = a->look_bits[w]; bits; bits &= bits - 1) {
        const uint32_t r = w * 64 + unsigned(__builtin_ctzll(bits));
        if (a->regions[r].due > now) continue;
        if (!region_dense(a, r)) {
          look_clear(a, r);  // no longer in use: a look again when it fills anew
        } else if (n < kLooksPerPass && g_collapse_tokens) {
          look_clear(a, r);
          claimed[n++] = r;
        }
      }
    }
  }
  for (unsigned i = 0; i < n; i++) {
    if (g_collapse_tokens) {
      region_collapse(a, claimed[i], now);
      continue;
    }
    LockGuard g(a->lock);  // out of tokens: the next pass looks again
    if (!a->regions[claimed[i]].due) {
      a->regions[claimed[i]].due = now;
      look_set(a, claimed[i]);
    }
  }
}

// Under RLIMIT_AS an arena takes at most an eighth of the limit (a 1 GiB limit leaves
// room for the program: 128 MiB arenas), and a reservation the kernel refuses is tried
// again at half the size, down to one 64 MiB unit.
Arena* arena_create() {
  size_t size = size_t(option(Opt::kArenaReserve));
  uint64_t limit = os::address_space_limit();
  if (size > limit / 8) size = limit / 8 / kArenaUnit * kArenaUnit;
  if (size < kArenaUnit) size = kArenaUnit;
  void* mem;
  while (os::reserve(size, kArenaUnit, &mem)) {
    if (size == kArenaUnit) return nullptr;
    size = size / 2 / kArenaUnit * kArenaUnit;
  }
  stat_add(g_stats.os_mmaps, 1);
  uintptr_t base = reinterpret_cast<uintptr_t>(mem);
  if (((base + size - 1) >> 47) != 0) {  // beyond the map (5-level paging hint)
    os::unmap(mem, size);
    return nullptr;
  }
  os::huge_pages(mem, size, option(Opt::kThp) != 0);
  auto* a = static_cast<Arena*>(mem);
  a->base = base;
  a->size = size;
  a->slice_count = uint32_t(size >> kSliceShift);
  a->word_count = (a->slice_count + 63) / 64;
  // Meta layout after the header: the bitmaps and per-word times, the slice map, the
  // descriptors, the regions.
  uintptr_t p = (base + sizeof(Arena) + 63) & ~uintptr_t(63);
  auto per_word = [&] {  // one uint64_t per bitmap word
    auto* w = reinterpret_cast<uint64_t*>(p);
    p += a->word_count * sizeof(uint64_t);
    return w;
  };
  a->free_bits = per_word();
  a->committed_bits = per_word();
  a->pending_bits = per_word();
  a->word_due = per_word();
  a->purged_bits = per_word();
  a->word_purged = per_word();
  a->word_early = per_word();
  a->word_kind = per_word();
  a->word_touched = per_word();
  p = (p + 63) & ~uintptr_t(63);
  a->slice_page = reinterpret_cast<uintptr_t*>(p);
  p += size_t(a->slice_count) * sizeof(uintptr_t);
  p = (p + 127) & ~uintptr_t(127);
  a->pages = reinterpret_cast<Page*>(p);
  p += size_t(a->slice_count) * sizeof(Page);
  if (secure_on()) {
    a->secure_bits = reinterpret_cast<uint64_t*>(p);
    p += size_t(a->slice_count) * kSecureWordsPerSlice * sizeof(uint64_t);
  }
  // Last, so that the rest keeps its place (the OS pages a program's first pages
  // touch); touched when a region first fills.
  const size_t region_count = a->slice_count / kRegionSlices;
  a->look_bits = reinterpret_cast<uint64_t*>(p);
  p += (region_count + 63) / 64 * sizeof(uint64_t);
  a->regions = reinterpret_cast<Region*>(p);
  p += region_count * sizeof(Region);
  a->meta_slices = uint32_t((p - base + kSliceSize - 1) >> kSliceShift);
  for (uint32_t s = a->meta_slices; s < a->slice_count; s++)
    a->free_bits[s / 64] |= uint64_t(1) << (s % 64);
  // The meta area is resident as far as it is touched; count the header part now and
  // treat the descriptors as committed on use (they are small next to the pages).
  stat_add(g_stats.arena_meta, int64_t(a->meta_slices) * int64_t(kSliceSize) / 8);
  stat_add(g_stats.arenas, 1);
  return a;
}

// Find `n` free slices aligned to n (n in {1, 16, 64}); prefer committed slices, so a
// page that was freed recently is reused before it is purged and faulted in again.
bool arena_find(Arena* a, unsigned n, uint32_t* out) {
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t w = 0; w < a->word_count; w++) {
      uint64_t cand = a->free_bits[w];
      if (pass == 0) cand &= a->committed_bits[w];
      if (!cand) continue;
      if (n == 1) {
        *out = w * 64 + unsigned(__builtin_ctzll(cand));
        return true;
      }
      for (unsigned bit = 0; bit < 64; bit += n) {
        uint64_t m = run_mask(bit, n);
        if ((cand & m) == m) {
          *out = w * 64 + bit;
          return true;
        }
      }
    }
  }
  return false;
}

Page* arena_take(Arena* a, unsigned n) {
  uint32_t s;
  uint64_t purged_at = 0, refault_bytes = 0;
  bool early = false;
  HoldKind kind = HoldKind::kSmall;
  {
    LockGuard g(a->lock);
    if (!arena_find(a, n, &s)) return nullptr;
    uint32_t w = s / 64;
    uint64_t m = run_mask(s % 64, n);
    int64_t fresh = __builtin_popcountll(m & ~a->committed_bits[w]);
    int64_t was_pending = __builtin_popcountll(m & a->pending_bits[w]);
    if (a->purged_bits[w] & m) {
      purged_at = a->word_purged[w], early = a->word_early[w];
      kind = HoldKind(a->word_kind[w]);
      refault_bytes = uint64_t(n) * kSliceSize;
      if (kind == HoldKind::kLarge && a->word_touched[w] && a->word_touched[w] < refault_bytes)
        refault_bytes = a->word_touched[w];
    }
    // Nothing of the word is resident any more: what it touched is gone.
    if (!a->committed_bits[w]) a->word_touched[w] = 0;
    a->free_bits[w] &= ~m;
    a->pending_bits[w] &= ~m;
    a->purged_bits[w] &= ~m;
    a->committed_bits[w] |= m;
    stat_add(g_stats.arena_committed, fresh * int64_t(kSliceSize));
    stat_add(g_stats.purge_pending, -was_pending * int64_t(kSliceSize));
    regions_note_filled(a, s, n);
    arena_check(a);
  }
  if (purged_at) purge_note_reuse(kind, os::now_ms(), purged_at, early, refault_bytes);
  Page* pg = &a->pages[s];
  pg->first_slice = s;
  pg->slice_count = n;
  pg->arena = a;
  pg->start = reinterpret_cast<uint8_t*>(a->base + (uintptr_t(s) << kSliceShift));
  for (unsigned i = 0; i < n; i++) a->slice_page[s + i] = reinterpret_cast<SliceRef>(pg);
  return pg;
}

}  // namespace

Page* arena_alloc_page(unsigned slices) {
  for (;;) {
    uint32_t count = g_arena_count.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < count; i++)
      if (Page* pg = arena_take(g_arenas[i], slices)) {
        stat_add(g_stats.pages_alloc, 1);
        stat_add(g_stats.page_bytes, int64_t(slices) * int64_t(kSliceSize));
        return pg;
      }
    LockGuard g(g_arena_create_lock);
    if (g_arena_count.load(std::memory_order_acquire) != count) continue;  // raced
    if (count == kMaxArenas) return nullptr;
    Arena* a = arena_create();
    if (!a) return nullptr;
    a->index = count;
    for (uintptr_t u = a->base; u < a->base + a->size; u += kArenaUnit) {
      g_slice_map[u >> kArenaUnitShift] = a->slice_page + ((u - a->base) >> kSliceShift);
      g_arena_map[u >> kArenaUnitShift] = a;
    }
    g_arenas[count] = a;
    g_arena_count.store(count + 1, std::memory_order_release);
  }
}

void arena_set_page_class(Page* pg, unsigned cls) {
  SliceRef r = reinterpret_cast<SliceRef>(pg) | cls;
  uintptr_t* sp = pg->arena->slice_page + pg->first_slice;
  for (unsigned i = 0; i < pg->slice_count; i++) sp[i] = r;
}

void arena_free_page(Page* pg, bool due_now, bool held) {
  Arena* a = pg->arena;
  uint32_t s = pg->first_slice, n = pg->slice_count;
  const bool large = n == kLargePageSlices;
  const uint64_t counted = page_hold_bytes(pg);
  for (unsigned i = 0; i < n; i++) a->slice_page[s + i] = reinterpret_cast<SliceRef>(&g_released_page);
  stat_add(g_stats.pages_freed, 1);
  stat_add(g_stats.page_bytes, -int64_t(n) * int64_t(kSliceSize));
  // The plain deadline: a pass keeps the page longer only within the hold's budget.
  const uint64_t now = os::now_ms();
  const HoldKind kind = hold_kind_of(large ? kPageLarge : kPageSmall);
  uint64_t due = now + (due_now ? 0 : purge_delay_ms());
  if (held) {
    // Its hold is spent: due as if it had ended now (the word's other pages with it).
    const uint64_t hold = purge_hold_ms(kind);
    due = now > hold ? now - hold : 1;
  }
  hold_note_release(kind, counted, now);
  {
    LockGuard g(a->lock);
    uint32_t w = s / 64;
    uint64_t m = run_mask(s % 64, n);
    SCAV_ASSERT((a->free_bits[w] & m) == 0);
    a->free_bits[w] |= m;
    a->pending_bits[w] |= m;
    // The latest free of a word sets its deadline: a word that keeps being freed into
    // is being reused, and waits until it is quiet. A page due now (a heap waited
    // its delay already) makes the word due now, and that is when the hold starts.
    a->word_due[w] = due;
    a->word_kind[w] = uint64_t(kind);
    if (large && counted > a->word_touched[w]) a->word_touched[w] = counted;
    stat_add(g_stats.purge_pending, int64_t(n) * int64_t(kSliceSize));
    arena_check(a);
  }
  // Bits first, then the arm: a pass resets the expire before it reads the bits, so
  // either it sees these bits or this arm sees its reset and schedules the next pass.
  // Always an RMW on the expire, even when the arena is armed already, so that it is
  // ordered after a concurrent pass's reset (seed 003).
  // Earlier, not only from 0: the arena may be armed for pages the hold keeps,
  // which fall due later than this one's plain delay.
  purge_arm_earlier(a->purge_expire, due);
}

bool collapse_enabled() {
  return option(Opt::kThpCollapseMs) && !option(Opt::kThp) && option(Opt::kScavenger) &&
         option(Opt::kPurgeAdvice) != kAdviceFree && !g_collapse_unsupported.load(std::memory_order_relaxed);
}

[[gnu::cold]] void arena_note_split(Arena* a, uintptr_t lo, uintptr_t hi) {
  LockGuard g(a->lock);
  for (uintptr_t r = (lo - a->base) >> kRegionShift; r <= (hi - 1 - a->base) >> kRegionShift; r++)
    region_split(a, uint32_t(r));
}

uint64_t arenas_purge(bool force, bool scan, uint64_t now, bool collapse) {
  uint64_t total = 0;
  bool lazy = option(Opt::kPurgeAdvice) == kAdviceFree;
  // Pages past their plain delay stay for their kind's hold, as long as its budget
  // lasts.
  uint64_t hold[kHoldKinds] = {}, budget[kHoldKinds] = {}, kept[kHoldKinds] = {};
  for (unsigned k = 0; !force && k < kHoldKinds; k++) {
    hold[k] = purge_hold_ms(HoldKind(k));
    budget[k] = hold_budget_bytes(HoldKind(k), now);
  }
  bool visited = false;  // kept is what the latest pass to look at the words keeps
  uint32_t count = g_arena_count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < count; i++) {
    Arena* a = g_arenas[i];
    uint64_t e = a->purge_expire.load(std::memory_order_seq_cst);
    if (e == 0 && !force && !scan) continue;
    if (!force && e > now) continue;  // not due: stays armed, put back by the pass
    visited = true;
    // Reset before reading the bits: a free whose bits we miss sees 0 and re-arms.
    a->purge_expire.exchange(0, std::memory_order_seq_cst);
    uint64_t left_due = 0;  // earliest deadline of a word we leave pending
    for (uint32_t w = 0; w < a->word_count; w++) {
      // One word (at most 4 MiB) per lock hold, so page allocations are not held up
      // behind a long purge.
      LockGuard g(a->lock);
      uint64_t bits = a->pending_bits[w] & a->free_bits[w];
      if (!bits) continue;
      if (!force && a->word_due[w] > now) {
        left_due = earlier_deadline(left_due, a->word_due[w]);
        continue;
      }
      const unsigned k = unsigned(a->word_kind[w]);
      uint64_t word_bytes = uint64_t(__builtin_popcountll(bits)) * kSliceSize;
      if (k == unsigned(HoldKind::kLarge) && a->word_touched[w] < word_bytes) word_bytes = a->word_touched[w];
      const bool held = hold[k] && now < a->word_due[w] + hold[k];
      if (held && word_bytes <= budget[k]) {
        budget[k] -= word_bytes;
        kept[k] += word_bytes;
        const uint64_t held_due = a->word_due[w] + hold[k];
        if (!left_due || held_due < left_due) left_due = held_due;
        continue;
      }
      uint64_t left = bits;
      while (left) {
        unsigned lo = unsigned(__builtin_ctzll(left));
        uint64_t shifted = ~(left >> lo);
        unsigned len = shifted ? unsigned(__builtin_ctzll(shifted)) : 64 - lo;
        void* p = reinterpret_cast<void*>(a->base + ((uintptr_t(w) * 64 + lo) << kSliceShift));
        os::purge(p, size_t(len) << kSliceShift, lazy);
        stat_add(g_stats.purge_calls, 1);
        left &= ~run_mask(lo, len);
      }
      for (uint32_t r = 2 * w; r < 2 * w + 2; r++)
        if (bits & region_mask(r)) region_split(a, r);
      int64_t bytes = int64_t(__builtin_popcountll(bits)) * int64_t(kSliceSize);
      a->pending_bits[w] &= ~bits;
      a->committed_bits[w] &= ~bits;
      // A forced purge was asked for: taking its memory again is no sign that the
      // delay is short.
      if (force) {
        a->purged_bits[w] &= ~bits;
      } else {
        a->purged_bits[w] |= bits;
        a->word_purged[w] = now ? now : 1;
        a->word_early[w] = held;  // the hold would have kept it: the budget was spent
      }
      stat_add(g_stats.arena_committed, -bytes);
      stat_add(g_stats.purge_pending, -bytes);
      stat_add(g_stats.purged, bytes);
      total += uint64_t(bytes);
      arena_check(a);
    }
    if (left_due) purge_arm(a->purge_expire, left_due);
  }
  // Looks wake nobody: they wait for a pass that runs anyway (a purge, a heap's
  // cache, the safety scan), so a program whose heap fills costs no extra wakes.
  for (uint32_t i = 0; collapse && !force && i < count; i++) regions_collapse(g_arenas[i], now);
  for (unsigned k = 0; visited && !force && k < unsigned(HoldKind::kHuge); k++)
    g_stats.hold_kept[k].store(kept[k], std::memory_order_relaxed);
  return total;
}

uint64_t arenas_earliest_expire() {
  uint64_t best = 0;
  uint32_t count = g_arena_count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < count; i++) {
    // An RMW, not a load: ordered with the arming CAS of a concurrent free, so either
    // we see its expire or it saw the reset and armed the global deadline itself.
    uint64_t zero = 0;
    std::atomic<uint64_t>& x = g_arenas[i]->purge_expire;
    x.compare_exchange_strong(zero, 0, std::memory_order_seq_cst);
    uint64_t e = zero;
    if (e && (!best || e < best)) best = e;
  }
  return best;
}

void arenas_lock_all() {
  g_arena_create_lock.lock();
  uint32_t count = g_arena_count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < count; i++) g_arenas[i]->lock.lock();
}

void arenas_unlock_all() {
  uint32_t count = g_arena_count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < count; i++) g_arenas[i]->lock.unlock();
  g_arena_create_lock.unlock();
}

void arenas_reset_locks() {
  uint32_t count = g_arena_count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < count; i++) g_arenas[i]->lock.reset();
  g_arena_create_lock.reset();
}

}  // namespace scav
