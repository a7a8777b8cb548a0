// heap.cpp - the slow paths of per-thread heaps: finding or making a page with free
// blocks, full and empty pages, remote frees, thread exit and adoption, idle hand-off,
// and the scavenger's visits. Owner fields are touched by the owning thread, or by the
// scavenger while it holds the heap in kHeapBusy; the heap list is under g_heaps_lock.
#include "heap.h"

#include <cerrno>
#include <new>

#include "arena.h"
#include "debug.h"
#include "huge.h"
#include "init.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "scavenger.h"
#include "secure.h"
#include "stats.h"

namespace scav {

constinit Page g_empty_page{};
constinit Heap g_empty_heap{};
__thread Heap* tls_heap = &g_empty_heap;
__thread Heap* tls_fast_heap = &g_empty_heap;
bool g_asym_fence = false;  // set once at process init, before any heap exists

namespace {

Lock g_heaps_lock;
Heap* g_heaps = nullptr;  // every heap ever made; heaps are never freed, only reused
char* g_heap_chunk = nullptr;
size_t g_heap_chunk_left = 0;

__attribute__((always_inline)) inline void list_push_front(PageList& l, Page* pg) {
  pg->prev = nullptr;
  pg->next = l.first;
  if (l.first) l.first->prev = pg;
  else l.last = pg;
  l.first = pg;
}

__attribute__((always_inline)) inline void list_push_back(PageList& l, Page* pg) {
  pg->next = nullptr;
  pg->prev = l.last;
  if (l.last) l.last->next = pg;
  else l.first = pg;
  l.last = pg;
}

__attribute__((always_inline)) inline void list_remove(PageList& l, Page* pg) {
  if (pg->prev) pg->prev->next = pg->next;
  else l.first = pg->next;
  if (pg->next) pg->next->prev = pg->prev;
  else l.last = pg->prev;
  pg->next = pg->prev = nullptr;
}

inline void sync_current(Heap* h, unsigned c) {
  h->current[c] = h->queue[c].first ? h->queue[c].first : &g_empty_page;
}

void page_init(Page* pg, Heap* h, unsigned c) {
  pg->free = nullptr;
  pg->used = 0;
  pg->bsize = uint32_t(class_size(c));
  pg->capacity = uint32_t((size_t(pg->slice_count) << kSliceShift) / pg->bsize);
  pg->carved = 0;
  pg->owner_tag.store(reinterpret_cast<uintptr_t>(h), std::memory_order_relaxed);
  pg->cls = uint16_t(c);
  arena_set_page_class(pg, c);
  pg->kind = class_kind(c);
  pg->where = kWhereNone;
  pg->thread_free.store(nullptr, std::memory_order_relaxed);
  pg->in_full.store(0, std::memory_order_relaxed);
}

void page_release(Page* pg, bool due_now, bool held = false) {
  SCAV_ASSERT(pg->used == 0 && !pg->thread_free.load());
  pg->owner_tag.store(0, std::memory_order_relaxed);
  pg->where = kWhereNone;
  pg->free = nullptr;
  arena_free_page(pg, due_now, held);
}

// Move a page with no free block to the full list, unless a remote free raced in.
// in_full and thread_free form a Dekker pair with page_free_remote: the owner stores
// in_full then loads thread_free; a remote free pushes then loads in_full; one of the
// two sees the other, so a remote free into a full page always flags the heap.
bool page_to_full(Heap* h, Page* pg) {
  pg->in_full.store(1, std::memory_order_seq_cst);
  if (pg->thread_free.load(std::memory_order_seq_cst)) {
    pg->in_full.store(0, std::memory_order_relaxed);
    return false;
  }
  unsigned c = pg->cls;
  list_remove(h->queue[c], pg);
  list_push_back(h->full[c], pg);
  pg->where = kWhereFull;
  pg->owner_tag.store(pg->owner_tag.load(std::memory_order_relaxed) | kTagFull,
                      std::memory_order_relaxed);
  sync_current(h, c);
  return true;
}

void page_unfull(Heap* h, Page* pg) {
  SCAV_ASSERT(pg->where == kWhereFull);
  unsigned c = pg->cls;
  list_remove(h->full[c], pg);
  pg->in_full.store(0, std::memory_order_relaxed);
  pg->owner_tag.store(pg->owner_tag.load(std::memory_order_relaxed) & ~kTagFull,
                      std::memory_order_relaxed);
  list_push_back(h->queue[c], pg);
  pg->where = kWhereQueue;
  sync_current(h, c);
}

__attribute__((always_inline)) inline void page_unlink(Heap* h, Page* pg) {
  unsigned c = pg->cls;
  if (pg->where == kWhereQueue) list_remove(h->queue[c], pg);
  else if (pg->where == kWhereFull) {
    list_remove(h->full[c], pg);
    pg->in_full.store(0, std::memory_order_relaxed);
    pg->owner_tag.store(pg->owner_tag.load(std::memory_order_relaxed) & ~kTagFull,
                        std::memory_order_relaxed);
  }
  pg->where = kWhereNone;
  sync_current(h, c);
}

// The cache protocol. A slot is shared between the owner, which uses it on every put
// and take (a malloc/free cycle of one 128 KiB buffer), and the scavenger, which comes
// at most a few times per purge delay. So the owner pays no locked instruction: it
// reads the heap's steal epoch, does a plain load and store on the slot, and reads the
// epoch again. The scavenger makes the epoch odd, runs a membarrier (a full fence on
// every thread: an asymmetric Dekker pair), CASes slots, and makes the epoch even. If
// the owner's store was not visible to the scavenger, the owner executed it after the
// fence and its second read sees an odd or changed epoch; it then waits for an even
// epoch and checks whether the page it touched was taken (a taken page has been
// released: its owner_tag is no longer this heap, and only this owner, busy here,
// could have made it ours again). Comparing two reads, not one flag, also catches a
// whole steal that ran while the owner was preempted in between. Without membarrier
// both sides use atomic exchange/CAS.
inline bool owner_still_has(Heap* h, Page* pg) {
  return (pg->owner_tag.load(std::memory_order_relaxed) & ~kTagMask) ==
         reinterpret_cast<uintptr_t>(h);
}

__attribute__((always_inline)) inline bool steal_overlapped(Heap* h, uint32_t e1) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint32_t e2 = h->steal_epoch.load(std::memory_order_acquire);
  return SCAV_UNLIKELY(e1 != e2 || (e2 & 1));
}

// Take class c's cached block (any case the fast path declines). Returns null if the
// slot is empty or the scavenger took the page.
Block* cache_take(Heap* h, unsigned c) {
  std::atomic<uintptr_t>& slot = h->cache[c].block;
  uint32_t e1 = h->steal_epoch.load(std::memory_order_acquire);
  uintptr_t v = slot.load(std::memory_order_relaxed);
  if (slot_empty(v)) return nullptr;
  Page* pg = h->cache[c].page;
  if (!g_asym_fence) {
    v = slot.exchange(kCacheMarked, std::memory_order_acq_rel);
    if (slot_empty(v)) return nullptr;
  } else {
    slot.store(0, std::memory_order_relaxed);
    if (steal_overlapped(h, e1) && !heap_steal_wait(h, pg)) return nullptr;
  }
  SCAV_ASSERT(pg->where == kWhereCached && pg->used == 1 && pg->cls == c);
  return reinterpret_cast<Block*>(v & ~kCacheMarked);
}

// Put block b, the last used block of pg, in its class's slot. Returns the page whose
// block it displaced (still owned, used == 1), or null.
Page* cache_put(Heap* h, unsigned c, Page* pg, Block* b) {
  std::atomic<uintptr_t>& slot = h->cache[c].block;
  Page* oldpg = h->cache[c].page;
  h->cache[c].page = pg;
  uintptr_t nv = reinterpret_cast<uintptr_t>(b);
  uint32_t e1 = h->steal_epoch.load(std::memory_order_acquire);
  uintptr_t old;
  if (!g_asym_fence) {
    old = slot.exchange(nv, std::memory_order_acq_rel);
  } else {
    old = slot.load(std::memory_order_relaxed);
    slot.store(nv, std::memory_order_release);
    if (!slot_empty(old) && steal_overlapped(h, e1) && !heap_steal_wait(h, oldpg)) old = 0;
  }
  return slot_empty(old) ? nullptr : oldpg;
}

// A float is the page of a block handed out from the cache: in no list, so that its
// next free goes back to the slot without relinking. One per class; an older one is
// put back in the queue, where its free blocks can be used.
void float_link(Heap* h, unsigned c) {
  Page* f = h->cache[c].floating;
  if (!f) return;
  h->cache[c].floating = nullptr;
  list_push_back(h->queue[c], f);
  f->where = kWhereQueue;
  sync_current(h, c);
}

// The owner took the block of class c's slot: its page floats when it has nothing else
// to hand out, else it goes in front of the queue.
void cache_taken(Heap* h, unsigned c) {
  Page* pg = h->cache[c].page;
  if (!pg->free) {
    float_link(h, c);
    pg->where = kWhereFloat;
    h->cache[c].floating = pg;
  } else {
    list_push_front(h->queue[c], pg);
    pg->where = kWhereQueue;
    sync_current(h, c);
  }
}

Page* heap_find_page(Heap* h, unsigned c) {
  for (;;) {
    Page* pg = h->queue[c].first;
    while (pg) {
      page_collect(pg);
      if (!pg->free) page_extend(pg);
      if (pg->free) {
        if (pg != h->queue[c].first) {
          list_remove(h->queue[c], pg);
          list_push_front(h->queue[c], pg);
        }
        sync_current(h, c);
        return pg;
      }
      Page* next = pg->next;
      if (!page_to_full(h, pg)) continue;  // a remote free arrived: take it
      pg = next;
    }
    // Full pages that other threads freed into since we last looked.
    uint64_t bit = uint64_t(1) << (c & 63);
    std::atomic<uint64_t>& fr = h->full_remote[c >> 6];
    if (!(fr.load(std::memory_order_relaxed) & bit)) break;
    fr.fetch_and(~bit, std::memory_order_seq_cst);
    bool moved = false;
    for (Page* f = h->full[c].first; f;) {
      Page* next = f->next;
      if (f->thread_free.load(std::memory_order_acquire)) {
        page_unfull(h, f);
        moved = true;
      }
      f = next;
    }
    if (!moved) break;
  }
  // The floating page has room (it has one block out), then a fresh page.
  Page* pg = h->cache[c].floating;
  if (pg) {
    h->cache[c].floating = nullptr;
    page_collect(pg);
  } else {
    pg = arena_alloc_page(kind_slices(class_kind(c)));
    if (!pg) return nullptr;
    page_init(pg, h, c);
  }
  list_push_front(h->queue[c], pg);
  pg->where = kWhereQueue;
  sync_current(h, c);
  if (!pg->free) page_extend(pg);
  page_check(pg);
  return pg;
}

Heap* heap_acquire() {
  LockGuard g(g_heaps_lock);
  for (Heap* h = g_heaps; h; h = h->next_all) {
    uint32_t st = kHeapAbandoned;
    if (h->state.compare_exchange_strong(st, kHeapOwned, std::memory_order_acquire)) return h;
  }
  size_t need = (sizeof(Heap) + 63) & ~size_t(63);
  if (g_heap_chunk_left < need) {
    void* mem;
    const size_t chunk = 1 << 20;
    if (os::map_fresh(chunk, &mem)) return nullptr;
    stat_add(g_stats.os_mmaps, 1);
    g_heap_chunk = static_cast<char*>(mem);
    g_heap_chunk_left = chunk;
  }
  Heap* h = new (g_heap_chunk) Heap();
  if (!g_asym_fence) {  // see heap.h
    h->steal_epoch.store(1, std::memory_order_relaxed);
    for (CacheSlot& s : h->cache) s.block.store(kCacheMarked, std::memory_order_relaxed);
  }
  g_heap_chunk += need;
  g_heap_chunk_left -= need;
  h->next_all = g_heaps;
  g_heaps = h;
  stat_add(g_stats.heaps, 1);
  return h;
}

Heap* heap_thread_init() {
  process_init();
  // process_init may have allocated (pthread_atfork) and so set up our heap already.
  if (tls_heap != &g_empty_heap) return tls_heap;
  Heap* h = heap_acquire();
  if (!h) return nullptr;
  tls_heap = h;
  // Options are read by now (process_init).
  if (!secure_on()) tls_fast_heap = h;
  process_thread_attach(h);
  scavenger_new_thread();
  return h;
}

void page_free_remote(Page* pg, Block* b) {
  // Read the owner and the class while our block keeps the page from being released:
  // once the block is pushed, the owner (or a pass) may collect it, find the page
  // empty and give it back, so after the push the page's owner fields may be gone.
  // Heaps are never unmapped, so touching h afterwards is safe; a flag set on a heap
  // whose page left in the meantime only costs its owner a look.
  Heap* h = page_heap(pg);
  SCAV_ASSERT(h != nullptr);
  const unsigned c = pg->cls;
  Block* old = pg->thread_free.load(std::memory_order_relaxed);
  do {
    b->next = old;
  } while (!pg->thread_free.compare_exchange_weak(old, b, std::memory_order_seq_cst,
                                                  std::memory_order_relaxed));
  if (pg->in_full.load(std::memory_order_seq_cst)) {
    uint64_t bit = uint64_t(1) << (c & 63);
    std::atomic<uint64_t>& fr = h->full_remote[c >> 6];
    if (!(fr.load(std::memory_order_relaxed) & bit)) fr.fetch_or(bit, std::memory_order_seq_cst);
  }
  if (!h->remote_pending.load(std::memory_order_relaxed))
    h->remote_pending.store(1, std::memory_order_relaxed);
  // Nobody allocates from an idle or abandoned heap, so nobody would collect this
  // block: ask the scavenger to visit.
  uint32_t st = h->state.load(std::memory_order_relaxed);
  if (st != kHeapOwned && h->purge_expire.load(std::memory_order_relaxed) == 0)
    purge_arm(h->purge_expire, purge_deadline_from_now());
}

}  // namespace

#ifdef SCAV_DEBUG
void page_check(const Page* pg) {
  uint32_t nfree = 0;
  for (Block* b = pg->free; b; b = b->next) {
    SCAV_ASSERT(reinterpret_cast<uint8_t*>(b) >= pg->start);
    SCAV_ASSERT(reinterpret_cast<uint8_t*>(b) < pg->start + size_t(pg->carved) * pg->bsize);
    nfree++;
    SCAV_ASSERT(nfree <= pg->capacity);
  }
  uint32_t ntf = 0;
  for (Block* b = pg->thread_free.load(); b; b = b->next) ntf++;
  (void)ntf;  // remote frees may land while we count: only a lower bound
  SCAV_ASSERT(pg->carved <= pg->capacity);
  SCAV_ASSERT(pg->used + nfree <= pg->carved);
}
#endif

void* heap_alloc_slow(size_t size) {
  Heap* h = tls_heap;
  if (SCAV_UNLIKELY(h == &g_empty_heap)) {
    h = heap_thread_init();
    if (!h) {
      errno = ENOMEM;
      return nullptr;
    }
  }
  SCAV_ASSERT(h->state.load(std::memory_order_relaxed) == kHeapOwned);
  void* p = nullptr;
  if (size > kLargeMax) {
    p = huge_alloc(size, 0, nullptr);
  } else {
    unsigned c = class_of(size);
    if (Block* b = cache_take(h, c)) {
      cache_taken(h, c);
      heap_check(h, c);
      return b;
    }
    Page* pg = heap_find_page(h, c);
    if (pg) {
      Block* b = pg->free;
      pg->free = b->next;
      pg->used++;
      p = b;
    }
    heap_check(h, c);
  }
  scavenger_poll();
  if (!p) errno = ENOMEM;
  return p;
}

void* heap_alloc_overlap(size_t size, unsigned c, uintptr_t v) {
  Heap* h = tls_heap;
  Page* pg = h->cache[c].page;
  if (!heap_steal_wait(h, pg)) return heap_alloc_slow(size);  // the scavenger took it
  cache_taken(h, c);
  heap_check(h, c);
  return reinterpret_cast<void*>(v & ~kCacheMarked);
}

bool heap_steal_wait(Heap* h, Page* pg) {
  while (h->steal_epoch.load(std::memory_order_acquire) & 1) os::yield();
  return owner_still_has(h, pg);
}

namespace {

// The scavenger marks a cache slot a delay less an eighth after the put (first_look),
// then takes its page if the mark is still there an eighth later (recheck); see
// cache_visit. Both from one reading of the delay.
struct CacheTimes {
  uint64_t recheck;
  uint64_t first_look;
};
CacheTimes cache_times() {
  uint64_t d = purge_delay_ms();
  uint64_t r = d / 8 ? d / 8 : 1;
  return {r, d > r ? d - r : 0};
}

// The cached page a put displaced, or one a collect takes: its one used block is
// the cached one, which nobody holds.
void cache_page_release(Page* pg, bool due_now, bool held = false) {
  SCAV_ASSERT(pg->where == kWhereCached && pg->used == 1);
  pg->used = 0;
  page_release(pg, due_now, held);
}

}  // namespace

void heap_free_last(Heap* h, Page* pg, Block* b) {
  // A cached page's one used block sits in the slot: nobody holds a block of it, so
  // this is the lone block freed again. Left alone, the put would displace the page
  // from its own slot and release it while the slot still points into it.
  if (SCAV_UNLIKELY(pg->where == kWhereCached)) pointer_fail("double free of", b);
  SCAV_ASSERT(pg->used == 1 && !pg->thread_free.load(std::memory_order_relaxed));
  unsigned c = pg->cls;
  if (pg->where == kWhereFloat) {
    SCAV_ASSERT(h->cache[c].floating == pg);
    h->cache[c].floating = nullptr;
  } else {
    page_unlink(h, pg);
  }
  pg->where = kWhereCached;
  Page* old = cache_put(h, c, pg, b);
  bool poll = false;
  if (old) {
    // The slot holds one block; the page it displaces goes to the arena, purged a
    // delay from now (its last free was no later than now).
    cache_page_release(old, false);
    poll = true;
  }
  // The first put after a visit schedules the next one, which marks the slot an eighth
  // of the delay before its page is due (see cache_visit). Read after the put: see the
  // put in free_fast.
  uint64_t now = os::now_ms();
  h->active_ms.store(now, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (h->purge_expire.load(std::memory_order_relaxed) == 0) {
    purge_arm(h->purge_expire, now + cache_times().first_look);
    poll = true;
  }
  heap_check(h, c);
  if (poll) scavenger_poll_free();
}

void heap_arm(Heap* h) {
  if (h->purge_expire.load(std::memory_order_relaxed) == 0) {
    uint64_t now = os::now_ms();
    h->active_ms.store(now, std::memory_order_relaxed);
    purge_arm(h->purge_expire, now + cache_times().first_look);
    scavenger_poll_free();
  }
}

void heap_free_slow(Page* pg, void* p) {
  SCAV_ASSERT(pg != nullptr);
  // With SCAV_SECURE=1 every free of a page's block comes here (tls_fast_heap).
  if (SCAV_UNLIKELY(secure_on())) secure_check_free(p);
  uintptr_t tag = pg->owner_tag.load(std::memory_order_relaxed);
  Block* b = (tag & kTagAligned) ? page_block_of(pg, p) : static_cast<Block*>(p);
  Heap* h = tls_heap;
  if ((tag & ~kTagMask) == reinterpret_cast<uintptr_t>(h)) {
    SCAV_ASSERT(pg->used > 0);
    if (pg->used == 1) {
      heap_free_last(h, pg, b);  // unlinks a full page too
      return;
    }
    b->next = pg->free;
    pg->free = b;
    pg->used--;
    if (tag & kTagFull) page_unfull(h, pg);
    return;
  }
  // A page nobody owns has no block out: a block freed again after its page went back
  // to the arena (the lone block, whose page the cache gave back), or a stray pointer.
  if (SCAV_UNLIKELY(tag == 0)) pointer_fail("double free (or invalid pointer) of", p);
  page_free_remote(pg, b);
}

void heap_mark_aligned(Page* pg) {
  pg->owner_tag.store(pg->owner_tag.load(std::memory_order_relaxed) | kTagAligned,
                      std::memory_order_relaxed);
}

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
      stat_add(g_stats.purge_calls, 1);
      stat_add(g_stats.purged, hi - lo);
      stat_add(g_stats.interiors_purged, hi - lo);
    }
    *mark = kInteriorPurged;
  }
}

// Remote frees, full pages that got some, empty pages (to the arena) and the float.
// interiors: also purge inside the large free blocks of pages that stay (the heap's
// owner is parked or gone, and the caller holds the heap).
void heap_collect_pages(Heap* h, bool due_now, bool interiors = false) {
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
// caller either holds the heap busy or runs inside an odd steal epoch after a fence.
// Slots of a kind whose hold applies (scavenger.h) are looked at a hold later than that,
// within what the kind's budget leaves after the arenas' kept pages (see CacheHold):
// a block a server cycles every few hundred milliseconds stays in its slot, one visit
// per hold, instead of being taken from it every delay, its page purged or kept by the
// arena and taken again from there by the next request, at a wake, a mark and a steal
// per request. Returns when to look again, or 0.
uint64_t cache_visit(Heap* h, bool take_all, uint64_t now, CacheHold* keep) {
  const CacheTimes times = cache_times();
  const uint64_t recheck = times.recheck;
  bool quick = h->scav_mark_ms && now - h->scav_mark_ms <= 2 * recheck;
  uint64_t busy_until = h->active_ms.load(std::memory_order_relaxed) + times.first_look;
  uint64_t next = 0;
  bool marked = false;
  auto want = [&](uint64_t t) {
    if (!next || t < next) next = t;
  };
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
      if (slot.compare_exchange_strong(v, g_asym_fence ? 0 : kCacheMarked, std::memory_order_acq_rel)) {
        Page* pg = arena_page_of(arena_of(reinterpret_cast<void*>(v)), reinterpret_cast<void*>(v));
        cache_page_release(pg, true, held);
        stat_add(g_stats.cache_steals, 1);
      } else {
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
    const bool same_page = (v ^ h->cache[c].scav_seen) < kind_slices(class_kind(c)) * kSliceSize;
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

}  // namespace

void heap_collect(Heap* h, bool due_now) {
  heap_collect_pages(h, due_now);
  for (unsigned c = 0; c < kNumClasses; c++) {
    if (cache_take(h, c)) cache_page_release(h->cache[c].page, due_now);
    heap_check(h, c);
  }
  // The scavenger's notes (scav_marked, scav_deferred) are left to it: they are its
  // own, under the purge guard, and a pass may be visiting this heap's slots right now
  // (ThreadSanitizer saw this reset race with cache_visit). It clears a slot's bits
  // when it finds the slot empty.
}

void heap_collect_current_thread() {
  Heap* h = tls_heap;
  if (h == &g_empty_heap) return;
  heap_collect(h, true);
}

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
        uint64_t next = cache_visit(h, force || st == kHeapAbandoned, now, force ? nullptr : &keep);
        h->state.store(st, std::memory_order_release);
        if (next) purge_arm_earlier(h->purge_expire, next);
        continue;
      }
      // Owned: its slots are read after one fence for the whole batch, even when
      // they look empty now; a put still in its thread's store buffer is seen then
      // (or that thread sees the reset above and arms the heap again).
      if (g_asym_fence) h->steal_epoch.fetch_add(1, std::memory_order_seq_cst);
      rearm[n] = 0;
      batch[n++] = h;
    }
    if (!n) continue;
    bool fenced = !g_asym_fence || os::fence_all_threads() == 0;
    visited |= fenced;
    for (unsigned i = 0; i < n; i++) {
      Heap* b = batch[i];
      // Without the fence the slots cannot be taken safely: look again later.
      rearm[i] = fenced ? cache_visit(b, force, now, force ? nullptr : &keep) : now + purge_delay_ms();
      if (g_asym_fence) b->steal_epoch.fetch_add(1, std::memory_order_release);
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

namespace {

// The owner takes its heap back from the scavenger: idle -> owned, waiting while a pass
// holds it busy. A heap that is owned already stays so.
void heap_reclaim(Heap* h) {
  uint32_t st = kHeapIdle;
  while (!h->state.compare_exchange_weak(st, kHeapOwned, std::memory_order_acquire)) {
    if (st == kHeapOwned) return;
    st = kHeapIdle;  // the scavenger holds it for a moment: wait for it to give it back
    os::yield();
  }
}

}  // namespace

void heap_thread_exit(void* arg) {
  Heap* h = static_cast<Heap*>(arg);
  if (tls_heap != h) return;
  // A thread that exits (or is cancelled) between scav_thread_idle_start and _end: a
  // pass may hold its heap busy, editing the lists we are about to collect, and would
  // then write back `idle` over our `abandoned` (a heap never adopted again). Take the
  // heap back first, as idle_end does.
  heap_reclaim(h);
  // Drop the heap from this thread before giving it up: destructors that run after us
  // and free memory go the remote path, and one that allocates adopts a heap anew.
  tls_heap = &g_empty_heap;
  tls_fast_heap = &g_empty_heap;
  heap_collect(h, false);
  h->state.store(kHeapAbandoned, std::memory_order_release);
  scavenger_poll();
}

void heap_idle_start() {
  Heap* h = tls_heap;
  if (h == &g_empty_heap) return;
  stat_add(g_stats.idle_handoffs, 1);
  // Only something new schedules a visit; a loop that idles at kHz with nothing freed
  // must not wake the scavenger per turn (seed 004). Cache puts armed the heap already.
  if (h->remote_pending.load(std::memory_order_relaxed)) {
    h->remote_pending.store(0, std::memory_order_relaxed);
    if (h->purge_expire.load(std::memory_order_relaxed) == 0)
      purge_arm(h->purge_expire, purge_deadline_from_now());
  }
  h->state.store(kHeapIdle, std::memory_order_seq_cst);
  scavenger_ensure_started();
}

void heap_idle_end() {
  Heap* h = tls_heap;
  if (h == &g_empty_heap) return;
  heap_reclaim(h);
}

void heap_fence_init() { g_asym_fence = os::fence_register() == 0; }

void heap_fence_fork_child() {
  if (!g_asym_fence || os::fence_register() == 0) return;
  // The child could not register (the parent could): fall back to atomic slot
  // accesses for good, epochs odd (see heap.h). We hold the heap list lock.
  g_asym_fence = false;
  for (Heap* h = g_heaps; h; h = h->next_all) {
    h->steal_epoch.store(1, std::memory_order_relaxed);
    for (CacheSlot& s : h->cache)
      if (s.block.load(std::memory_order_relaxed) == 0) s.block.store(kCacheMarked, std::memory_order_relaxed);
  }
}

void heaps_lock() { g_heaps_lock.lock(); }
void heaps_unlock() { g_heaps_lock.unlock(); }
void heaps_reset_lock() { g_heaps_lock.reset(); }

#ifdef SCAV_DEBUG
void heap_check(Heap* h, unsigned c) {
  SCAV_ASSERT(h->current[c] == (h->queue[c].first ? h->queue[c].first : &g_empty_page));
  unsigned n = 0;
  for (Page* pg = h->queue[c].first; pg && n < 64; pg = pg->next, n++) {
    SCAV_ASSERT(pg->where == kWhereQueue && pg->cls == c && page_heap(pg) == h);
    SCAV_ASSERT(!(pg->owner_tag.load(std::memory_order_relaxed) & kTagFull));
  }
  n = 0;
  for (Page* pg = h->full[c].first; pg && n < 64; pg = pg->next, n++) {
    SCAV_ASSERT(pg->where == kWhereFull && pg->cls == c && page_heap(pg) == h);
    SCAV_ASSERT(pg->owner_tag.load(std::memory_order_relaxed) & kTagFull);
  }
  if (Page* f = h->cache[c].floating) {
    SCAV_ASSERT(f->where == kWhereFloat && f->cls == c && page_heap(f) == h && f->used == 1);
    SCAV_ASSERT(f->next == nullptr && f->prev == nullptr);
  }
  // The slot may be emptied by the scavenger at any time, and the page it takes may be
  // another heap's a moment later: the fields read are only worth checking when no
  // steal ran while they were read (the same two epoch reads as the owner's access).
  uint32_t e1 = h->steal_epoch.load(std::memory_order_acquire);
  uintptr_t v = h->cache[c].block.load(std::memory_order_acquire);
  if (slot_empty(v) || (e1 & 1)) return;
  Page* pg = h->cache[c].page;
  bool ok = pg->where == kWhereCached && pg->cls == c && pg->used == 1 &&
            page_block_of(pg, reinterpret_cast<void*>(v & ~kCacheMarked)) ==
                reinterpret_cast<Block*>(v & ~kCacheMarked);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (h->steal_epoch.load(std::memory_order_relaxed) == e1) SCAV_ASSERT(ok);
}
#endif

}  // namespace scav
