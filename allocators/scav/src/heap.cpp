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
#include "stats.h"

namespace scav {

constinit Page g_empty_page{};
constinit Heap g_empty_heap{};
__thread Heap* tls_heap = &g_empty_heap;
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
  pg->kind = class_kind(c);
  pg->where = kWhereNone;
  pg->retire_gen = 0;
  pg->thread_free.store(nullptr, std::memory_order_relaxed);
  pg->in_full.store(0, std::memory_order_relaxed);
}

void page_release(Page* pg, bool due_now) {
  SCAV_ASSERT(pg->used == 0 && !pg->thread_free.load());
  pg->owner_tag.store(0, std::memory_order_relaxed);
  pg->where = kWhereNone;
  pg->free = nullptr;
  arena_free_page(pg, due_now);
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

// Retired slots are shared between the owner, which uses them on every retire and
// every take (a malloc/free cycle of one 128 KiB buffer), and a stealer (a purge pass),
// which comes at most once per purge interval. So the owner pays no locked instruction:
// it reads the heap's steal epoch, does plain loads and stores on the slot, and reads
// the epoch again. The stealer makes the epoch odd, runs a membarrier (a full fence on
// every thread: an asymmetric Dekker pair), CASes slots, and makes the epoch even. If
// the owner's store was not visible to the stealer, the owner executed it after the
// fence and its second read sees an odd or changed epoch; it then waits for an even
// epoch and checks whether the page it touched was stolen (a stolen page has been
// released: its owner_tag is no longer this heap). Comparing two reads, not one flag,
// also catches a whole steal that ran while the owner was preempted in between.
inline bool owner_still_has(Heap* h, Page* pg) {
  return (pg->owner_tag.load(std::memory_order_relaxed) & ~kTagMask) ==
         reinterpret_cast<uintptr_t>(h);
}

// True when a steal may have overlapped the owner's slot access; waits for it to end.
__attribute__((always_inline)) inline bool steal_overlapped(Heap* h, uint32_t e1) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint32_t e2 = h->steal_epoch.load(std::memory_order_acquire);
  if (SCAV_LIKELY(e1 == e2 && !(e2 & 1))) return false;
  while (h->steal_epoch.load(std::memory_order_acquire) & 1) os::yield();
  return true;
}

__attribute__((always_inline)) inline Page* take_retired(Heap* h, unsigned c) {
  std::atomic<Page*>& slot = h->retired[c];
  uint32_t e1 = h->steal_epoch.load(std::memory_order_acquire);
  Page* pg = slot.load(std::memory_order_acquire);
  if (!pg) return nullptr;
  if (!g_asym_fence)
    return slot.compare_exchange_strong(pg, nullptr, std::memory_order_acquire) ? pg : nullptr;
  slot.store(nullptr, std::memory_order_relaxed);
  if (SCAV_UNLIKELY(steal_overlapped(h, e1)) && !owner_still_has(h, pg)) return nullptr;
  return pg;
}

// An empty page is parked in its class's retired slot instead of going straight back
// to the arena: a thread that frees its last block and allocates again (a 128 KiB
// buffer per request) gets it back without a lock. The slot holds one page; the one it
// displaces goes to the arena. The scavenger steals pages that sat a whole interval.
// Returns true when it armed the heap or released a page (worth a scavenger poll).
__attribute__((always_inline)) inline bool heap_retire(Heap* h, Page* pg) {
  pg->where = kWhereRetired;
  __atomic_store_n(&pg->retire_gen, h->visit_gen.load(std::memory_order_relaxed),
                   __ATOMIC_RELAXED);
  std::atomic<Page*>& slot = h->retired[pg->cls];
  uint32_t e1 = h->steal_epoch.load(std::memory_order_acquire);
  Page* old = slot.load(std::memory_order_acquire);
  if (!g_asym_fence) {
    if (old && slot.compare_exchange_strong(old, pg, std::memory_order_acq_rel))
      page_release(old, false);
    else
      slot.store(pg, std::memory_order_release);  // empty, or the scavenger stole `old`
  } else {
    slot.store(pg, std::memory_order_release);
    if (SCAV_UNLIKELY(steal_overlapped(h, e1)) && old && !owner_still_has(h, old))
      old = nullptr;  // the stealer took it
    if (old) page_release(old, false);
  }
  if (h->purge_expire.load(std::memory_order_relaxed) == 0) {
    purge_arm(h->purge_expire, purge_deadline_from_now());
    return true;
  }
  return old != nullptr;
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
  Page* pg = take_retired(h, c);
  if (!pg) {
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
  process_thread_attach(h);
  return h;
}

void page_free_remote(Page* pg, Block* b) {
  Block* old = pg->thread_free.load(std::memory_order_relaxed);
  do {
    b->next = old;
  } while (!pg->thread_free.compare_exchange_weak(old, b, std::memory_order_seq_cst,
                                                  std::memory_order_relaxed));
  Heap* h = page_heap(pg);
  if (pg->in_full.load(std::memory_order_seq_cst)) {
    unsigned c = pg->cls;
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
  if (SCAV_LIKELY(size <= kLargeMax)) {
    // The lane of a thread that frees its last block of a class and allocates again
    // (one buffer per request): the page it retired a moment ago is in the slot.
    unsigned c = class_of(size);
    if (!h->queue[c].first) {
      if (Page* pg = take_retired(h, c)) {
        pg->next = pg->prev = nullptr;
        h->queue[c].first = h->queue[c].last = pg;
        pg->where = kWhereQueue;
        h->current[c] = pg;
        if (!pg->free) page_extend(pg);
        Block* b = pg->free;
        pg->free = b->next;
        pg->used++;
        return b;
      }
    }
  }
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
    Page* pg = heap_find_page(h, c);
    if (pg) {
      Block* b = pg->free;
      pg->free = b->next;
      pg->used++;
      p = b;
    }
  }
  scavenger_poll();
  if (!p) errno = ENOMEM;
  return p;
}

void heap_page_emptied(Heap* h, Page* pg) {
  SCAV_ASSERT(pg->used == 0);
  // A small current page stays: malloc/free of one block must not bounce it. It goes
  // back on idle hand-off, scav_collect, thread exit.
  if (pg->kind == kPageSmall && h->current[pg->cls] == pg) {
    h->has_empty = true;
    return;
  }
  page_unlink(h, pg);
  if (heap_retire(h, pg)) scavenger_poll();
}

void heap_free_slow(Page* pg, void* p) {
  SCAV_ASSERT(pg != nullptr);
  uintptr_t tag = pg->owner_tag.load(std::memory_order_relaxed);
  Block* b = (tag & kTagAligned) ? page_block_of(pg, p) : static_cast<Block*>(p);
  Heap* h = tls_heap;
  if ((tag & ~kTagMask) == reinterpret_cast<uintptr_t>(h)) {
    b->next = pg->free;
    pg->free = b;
    SCAV_ASSERT(pg->used > 0);
    pg->used--;
    if (tag & kTagFull) page_unfull(h, pg);
    if (pg->used == 0) heap_page_emptied(h, pg);
    return;
  }
  SCAV_ASSERT(tag != 0);  // a free of a block in a page nobody owns: double free
  page_free_remote(pg, b);
}

void heap_mark_aligned(Page* pg) {
  pg->owner_tag.store(pg->owner_tag.load(std::memory_order_relaxed) | kTagAligned,
                      std::memory_order_relaxed);
}

void heap_collect(Heap* h, bool release_all, bool due_now) {
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
      bool keep = !release_all && pg->kind == kPageSmall && h->current[c] == pg;
      if (pg->used == 0 && !keep) {
        page_unlink(h, pg);
        page_release(pg, due_now);
      }
      pg = next;
    }
    if (Page* r = take_retired(h, c)) page_release(r, due_now);
  }
  if (release_all) h->has_empty = false;
}

void heap_collect_current_thread(bool release_all) {
  Heap* h = tls_heap;
  if (h == &g_empty_heap) return;
  heap_collect(h, release_all, true);
}

void heaps_purge(bool force, bool scan, uint64_t now) {
  LockGuard g(g_heaps_lock);
  for (Heap* h = g_heaps; h; h = h->next_all) {
    uint64_t e = h->purge_expire.load(std::memory_order_seq_cst);
    uint32_t st = h->state.load(std::memory_order_acquire);
    bool unowned = st == kHeapIdle || st == kHeapAbandoned;
    bool due = e != 0 && e <= now;
    if (!force && !due && !(scan && unowned)) continue;
    if (e) h->purge_expire.exchange(0, std::memory_order_seq_cst);
    uint32_t gen = h->visit_gen.fetch_add(1, std::memory_order_relaxed) + 1;
    if (unowned && h->state.compare_exchange_strong(st, kHeapBusy, std::memory_order_acquire)) {
      heap_collect(h, true, force);
      h->state.store(st, std::memory_order_release);
      continue;
    }
    bool left = false, any = false;
    for (unsigned c = 0; c < kNumClasses && !any; c++)
      any = h->retired[c].load(std::memory_order_relaxed) != nullptr;
    if (!any) continue;
    // See take_retired: odd epoch, fence every thread, CAS, even epoch.
    h->steal_epoch.fetch_add(1, std::memory_order_seq_cst);
    if (g_asym_fence && os::fence_all_threads()) {
      h->steal_epoch.fetch_add(1, std::memory_order_release);
      continue;
    }
    for (unsigned c = 0; c < kNumClasses; c++) {
      Page* pg = h->retired[c].load(std::memory_order_acquire);
      if (!pg) continue;
      uint32_t rg = __atomic_load_n(&pg->retire_gen, __ATOMIC_RELAXED);
      if (force || rg + 1 < gen) {
        // The page sat a whole interval in the slot; in the arena it waits for the
        // arena's deadline like any freed range (now, when forced).
        if (h->retired[c].compare_exchange_strong(pg, nullptr, std::memory_order_acquire))
          page_release(pg, force);
      } else {
        left = true;
      }
    }
    h->steal_epoch.fetch_add(1, std::memory_order_release);
    if (left) purge_arm(h->purge_expire, now + uint64_t(option(Opt::kPurgeDelayMs)));
  }
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

void heap_thread_exit(void* arg) {
  Heap* h = static_cast<Heap*>(arg);
  if (tls_heap != h) return;
  // Drop the heap from this thread before giving it up: destructors that run after us
  // and free memory go the remote path, and one that allocates adopts a heap anew.
  tls_heap = &g_empty_heap;
  heap_collect(h, true, false);
  h->has_empty = false;
  h->state.store(kHeapAbandoned, std::memory_order_release);
  scavenger_poll();
}

void heap_idle_start() {
  Heap* h = tls_heap;
  if (h == &g_empty_heap) return;
  stat_add(g_stats.idle_handoffs, 1);
  // Only something new schedules a visit; a loop that idles at kHz with nothing freed
  // must not wake the scavenger per turn (seed 004).
  bool news = h->has_empty || h->remote_pending.load(std::memory_order_relaxed);
  if (news) {
    h->has_empty = false;
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
  uint32_t st = kHeapIdle;
  while (!h->state.compare_exchange_weak(st, kHeapOwned, std::memory_order_acquire)) {
    st = kHeapIdle;  // the scavenger holds it for a moment: wait for it to give it back
    os::yield();
  }
}

void heap_fence_init() { g_asym_fence = os::fence_register() == 0; }

void heaps_lock() { g_heaps_lock.lock(); }
void heaps_unlock() { g_heaps_lock.unlock(); }
void heaps_reset_lock() { g_heaps_lock.reset(); }

}  // namespace scav
