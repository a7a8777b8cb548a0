// heap_scavenge.cpp - the scavenger's half of per-thread heaps: a pass's visits, under
// the purge guard. It edits an idle or abandoned heap's lists only while it holds the heap
// kHeapBusy, an owned heap's cache slots only by CAS inside an odd steal epoch (the cache
// protocol in heap.cpp). heap_collect_pages also runs on an owner thread, on its own heap.
#include <atomic>
#include <cstdint>

#include "arena.h"
#include "debug.h"
#include "heap.h"
#include "heap_internal.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "page.h"
#include "scavenger.h"
#include "stats.h"

namespace scav {
namespace {

// Blocks this large are worth purging inside a page that stays (seed 000: the free
// blocks of an idle heap's 4 MiB pages). The block's first OS page stays: it holds the
// free-list link and the mark that says the rest was purged already (user data that
// happens to equal the mark only skips a purge).
constexpr uint32_t kInteriorMin = 64 * 1024;
constexpr uint64_t kInteriorPurged = 0x73636176496e5072ull;

void purge_free_interiors(Page* pg) {
  const bool lazy = option(Opt::kPurgeAdvice) == kAdviceFree;
  for (Block* b = pg->free; b; b = b->next) {
    uint64_t* mark = reinterpret_cast<uint64_t*>(b) + 1;
    if (*mark == kInteriorPurged) continue;
    uintptr_t lo = (reinterpret_cast<uintptr_t>(b) + 2 * sizeof(uint64_t) + os::kPageSize - 1) & ~(os::kPageSize - 1);
    uintptr_t hi = (reinterpret_cast<uintptr_t>(b) + pg->bsize) & ~(os::kPageSize - 1);
    if (hi > lo) {
      os::purge(reinterpret_cast<void*>(lo), hi - lo, lazy);
      arena_note_split(pg->arena, lo, hi);
      stat_add(g_stats.purge_calls, 1);
      stat_add(g_stats.purged, hi - lo);
      stat_add(g_stats.interiors_purged, hi - lo);
    }
    *mark = kInteriorPurged;
  }
}

}  // namespace

void heap_collect_pages(Heap* h, bool due_now, bool interiors) {
  h->remote_pending.store(0, std::memory_order_relaxed);
  for (unsigned c = 0; c < kNumClasses; c++) {
    for (Page* pg = h->full[c].first; pg;) {
      Page* next = pg->next;
      page_collect(pg);
      if (pg->free) page_unfull(h, pg);
      pg = next;
    }
    for (Page* pg = h->queue[c].first; pg;) {
      Page* next = pg->next;
      page_collect(pg);
      if (pg->used == 0) {
        page_unlink(h, pg);
        page_release(pg, due_now);
      } else if (interiors && pg->bsize >= kInteriorMin) {
        purge_free_interiors(pg);
      }
      pg = next;
    }
    if (Page* f = h->cache[c].floating) {
      page_collect(f);
      if (f->used == 0) {
        h->cache[c].floating = nullptr;
        f->where = kWhereNone;
        page_release(f, due_now);
      }
    }
  }
}

namespace {

// What the visits of one pass may keep cached past their look, per kind of page: the
// hold and what is left of its budget once the arenas' kept pages (as of their latest
// pass) are counted; a page counts as in the arenas (page_hold_bytes).
struct CacheHold {
  uint64_t hold[2] = {};
  uint64_t room[2] = {};
  uint64_t kept[2] = {};

  explicit CacheHold(uint64_t now) {
    for (unsigned k = 0; k < 2; k++) {
      hold[k] = purge_hold_ms(HoldKind(k));
      const uint64_t budget = hold_budget_bytes(HoldKind(k), now);
      const uint64_t used = g_stats.hold_kept[k].load(std::memory_order_relaxed);
      room[k] = hold[k] && budget > used ? budget - used : 0;
    }
  }
  // Whether slots of class c kept at an earlier visit stay kept (their kind's hold
  // may have been turned off since: a heap shrinking).
  bool holds(unsigned c) const { return hold[kind_of(c)] != 0; }
  // The slot of class c holds block v, just marked: how much longer to keep it.
  uint64_t take(unsigned c, uintptr_t v) {
    const unsigned k = kind_of(c);
    if (!hold[k] || bytes_of(v) > room[k]) return 0;
    count(c, v);
    return hold[k];
  }
  // A slot kept at an earlier visit, still marked: it spends the budget too.
  void count(unsigned c, uintptr_t v) {
    const unsigned k = kind_of(c);
    const uint64_t bytes = bytes_of(v);
    room[k] = room[k] > bytes ? room[k] - bytes : 0;
    kept[k] += bytes;
  }

 private:
  static unsigned kind_of(unsigned c) { return unsigned(hold_kind_of(class_kind(c))); }
  static uint64_t bytes_of(uintptr_t v) {
    void* p = reinterpret_cast<void*>(v & ~kCacheMarked);
    return page_hold_bytes(arena_page_of(arena_of(p), p));
  }
};

// What the scavenger does with the cache slots of a heap it visits. A slot it marked at
// an earlier visit and finds untouched has not been used since: its page goes back,
// purged in this pass. A slot put since is marked and looked at again an eighth of the
// delay later (the first put after a visit arms the heap for the delay less that
// eighth, so a page freed once is purged the delay after its free). A slot touched
// again within that eighth of being marked, or holding a block of the page marked at
// the last look, is in use, and is looked at again a delay later. So a thread that
// stops using its cache gets its pages back about the delay after its last put (at
// most twice the delay for a slot it had kept cycling), whether or not it calls the
// allocator again, and a thread that keeps cycling a block costs one visit per delay
// (two for a slot whose page changes). The first put of an interval may
// be long before the rest (a burst of frees that starts later): when the owner was in
// a slow put less than the delay ago, a slot put since the last look is marked only
// the delay (less the eighth) after that put, once per slot, so that a burst comes
// back the delay after its end and an idle slot of a busy thread still goes back. The
// caller either holds the heap busy (defer false: slots are taken here) or has
// fenced since it reset the heap's deadline.
// Slots of a kind whose hold applies (scavenger.h) are looked at a hold later than that,
// within what the kind's budget leaves after the arenas' kept pages (see CacheHold):
// a block a server cycles every few hundred milliseconds stays in its slot, one visit
// per hold, instead of being taken from it every delay, its page purged or kept by the
// arena and taken again from there by the next request, at a wake, a mark and a steal
// per request. Returns when to look again, or 0.
//
// Only a take needs the steal epoch: a mark the owner's take overwrites, or one set on
// a block it has just put back, decides nothing wrongly, and an owner never writes a
// slot the scavenger may CAS except through the epoch's protocol. So the visit of an
// owned heap (defer) looks and marks without it and notes the slots to take in the
// heap's scav_take, for slots_take to take inside an odd epoch after a second fence:
// the owner's loop pays for each change of the epoch (README, Speed). The notes are the
// heap's, not an array per pass on the scavenger's stack, whose page was one more
// fault that the server-echo workload counted.
bool takes_pending(const Heap* h) { return (h->scav_take[0] | h->scav_take[1]) != 0; }

// Take slot c's block v (marked under a hold: held) if the slot still holds it.
bool slot_steal(Heap* h, unsigned c, uintptr_t v, bool held) {
  if (!h->cache[c].block.compare_exchange_strong(v, g_asym_fence ? 0 : kCacheMarked,
                                                 std::memory_order_acq_rel))
    return false;
  Page* pg = arena_page_of(arena_of(reinterpret_cast<void*>(v)), reinterpret_cast<void*>(v));
  cache_page_release(pg, true, held);
  stat_add(g_stats.cache_steals, 1);
  return true;
}

uint64_t cache_visit(Heap* h, bool take_all, uint64_t now, CacheHold* keep, bool defer) {
  const CacheTimes times = cache_times();
  const uint64_t recheck = times.recheck;
  bool quick = h->scav_mark_ms && now - h->scav_mark_ms <= 2 * recheck;
  uint64_t busy_until = h->active_ms.load(std::memory_order_relaxed) + times.first_look;
  uint64_t next = 0;
  bool marked = false;
  auto want = [&](uint64_t t) { next = earlier_deadline(next, t); };
  if (defer) h->scav_take[0] = h->scav_take[1] = h->scav_take_held[0] = h->scav_take_held[1] = 0;
  for (unsigned c = 0; c < kNumClasses; c++) {
    std::atomic<uintptr_t>& slot = h->cache[c].block;
    uint64_t bit = uint64_t(1) << (c & 63);
    uint64_t& bits = h->scav_marked[c >> 6];
    uint64_t& put_off = h->scav_deferred[c >> 6];
    uintptr_t v = slot.load(std::memory_order_acquire);
    uint64_t& keep_until = h->scav_keep_until[c];
    if (slot_empty(v)) {
      bits &= ~bit;
      put_off &= ~bit;
      keep_until = 0;
      continue;
    }
    if (!take_all && (v & kCacheMarked) && keep_until > now && keep && keep->holds(c)) {
      // Marked under a hold that lasts.
      keep->count(c, v);
      want(keep_until);
      continue;
    }
    if (take_all || (v & kCacheMarked)) {
      bits &= ~bit;
      put_off &= ~bit;
      const bool held = keep_until != 0 && (v & kCacheMarked);
      keep_until = 0;
      if (defer) {
        h->scav_take[c >> 6] |= bit;
        if (held) h->scav_take_held[c >> 6] |= bit;
      } else if (!slot_steal(h, c, v, held)) {
        want(now + recheck);  // the owner touched it just now
      }
      continue;
    }
    if (busy_until > now && !(put_off & bit)) {
      put_off |= bit;
      want(busy_until);
      continue;
    }
    put_off &= ~bit;
    // Marked at the last look and taken since: in use, if that was within an eighth of
    // the mark, or if the block is of the page it marked then (the owner keeps cycling
    // the same page, as an event loop does between its waits). Looked at again the
    // delay less an eighth later, not an eighth later: one visit per delay for a slot
    // in steady use. A slot that holds another page (replaced in a burst of frees)
    // gets the quick look.
    const bool same_page = (v ^ h->cache[c].scav_seen) < class_slices(c) * kSliceSize;
    const bool in_use = (bits & bit) && (quick || same_page);
    if (slot.compare_exchange_strong(v, v | kCacheMarked, std::memory_order_acq_rel)) {
      const uint64_t look = now + (in_use ? times.first_look : recheck);
      const uint64_t held = keep ? keep->take(c, v) : 0;
      keep_until = held ? look + held : 0;
      want(look + held);
      h->cache[c].scav_seen = v;
      bits |= bit;
      marked = true;
    } else {
      want(now + recheck);
    }
  }
  if (marked) h->scav_mark_ms = now;
  return next;
}

// Take the slots cache_visit noted in scav_take: each that still holds a block, marked
// when the look found it marked (untouched since), or any block with take_all. The
// caller made h's steal epoch odd and fenced. Returns when to look again at a slot the
// owner touched meanwhile, or 0.
uint64_t slots_take(Heap* h, bool take_all, uint64_t now) {
  uint64_t next = 0;
  for (unsigned c = 0; c < kNumClasses; c++) {
    const uint64_t bit = uint64_t(1) << (c & 63);
    if (!(h->scav_take[c >> 6] & bit)) continue;
    uintptr_t v = h->cache[c].block.load(std::memory_order_acquire);
    const bool take = !slot_empty(v) && (take_all || (v & kCacheMarked));
    if (!take || !slot_steal(h, c, v, (h->scav_take_held[c >> 6] & bit) != 0)) {
      next = earlier_deadline(next, now + cache_times().recheck);  // the owner touched it just now
    }
  }
  return next;
}

}  // namespace

void heaps_purge(bool force, bool scan, uint64_t now) {
  // Owned heaps whose slots the pass looks at: all of them get one fence between them.
  constexpr unsigned kBatch = 64;
  Heap* batch[kBatch];
  uint64_t rearm[kBatch];
  CacheHold keep(now);
  bool visited = false;
  // A kind's hold turned off since the last pass (a heap shrinking): heaps armed for
  // the end of a hold are looked at now, so the slots they keep go back with the rest.
  static uint64_t last_pass_ms = 0;
  const bool revisit = !force && hold_off_since(last_pass_ms);
  last_pass_ms = now;
  LockGuard g(g_heaps_lock);
  Heap* h = g_heaps;
  while (h) {
    unsigned n = 0;
    for (; h && n < kBatch; h = h->next_all) {
      uint64_t e = h->purge_expire.load(std::memory_order_seq_cst);
      uint32_t st = h->state.load(std::memory_order_acquire);
      bool unowned = st == kHeapIdle || st == kHeapAbandoned;
      bool due = e != 0 && (e <= now || revisit);
      if (!force && !due && !(scan && unowned)) continue;
      // Reset before reading the heap's state: a put we miss sees 0 and re-arms.
      if (e) h->purge_expire.exchange(0, std::memory_order_seq_cst);
      if (unowned && h->state.compare_exchange_strong(st, kHeapBusy, std::memory_order_acquire)) {
        heap_collect_pages(h, force, true);
        visited = true;
        uint64_t next = cache_visit(h, force || st == kHeapAbandoned, now, force ? nullptr : &keep, false);
        h->state.store(st, std::memory_order_release);
        if (next) purge_arm_earlier(h->purge_expire, next);
        continue;
      }
      // Owned: its slots are read after one fence for the whole batch, even when
      // they look empty now; a put still in its thread's store buffer is seen then
      // (or that thread sees the reset above and arms the heap again). The slots to
      // take are taken after a second fence inside an odd steal epoch (cache_visit).
      rearm[n] = 0;
      batch[n++] = h;
    }
    if (!n) continue;
    bool fenced = !g_asym_fence || os::fence_all_threads() == 0;
    visited |= fenced;
    bool any = false;
    for (unsigned i = 0; i < n; i++) {
      // Without the fence the slots cannot be read safely: look again later.
      rearm[i] = fenced ? cache_visit(batch[i], force, now, force ? nullptr : &keep, true)
                        : now + purge_delay_ms();
      any |= fenced && takes_pending(batch[i]);
    }
    if (any) {
      if (g_asym_fence)
        for (unsigned i = 0; i < n; i++)
          if (takes_pending(batch[i])) batch[i]->steal_epoch.fetch_add(1, std::memory_order_seq_cst);
      const bool steal_fenced = !g_asym_fence || os::fence_all_threads() == 0;
      for (unsigned i = 0; i < n; i++) {
        if (!takes_pending(batch[i])) continue;
        // Without the fence no slot is taken: look again a recheck later.
        rearm[i] = earlier_deadline(rearm[i], steal_fenced ? slots_take(batch[i], force, now)
                                                           : now + cache_times().recheck);
        if (g_asym_fence) batch[i]->steal_epoch.fetch_add(1, std::memory_order_release);
      }
    }
    for (unsigned i = 0; i < n; i++)
      if (rearm[i]) purge_arm_earlier(batch[i]->purge_expire, rearm[i]);
  }
  for (unsigned k = 0; visited && !force && k < 2; k++)
    g_stats.hold_cached[k].store(keep.kept[k], std::memory_order_relaxed);
}

uint64_t heaps_earliest_expire() {
  LockGuard g(g_heaps_lock);
  uint64_t best = 0;
  for (Heap* h = g_heaps; h; h = h->next_all) {
    uint64_t e = 0;
    h->purge_expire.compare_exchange_strong(e, 0, std::memory_order_seq_cst);
    if (e && (!best || e < best)) best = e;
  }
  return best;
}

}  // namespace scav
