// heap_internal.h - what the two halves of the heaps share and nothing else includes:
// the owner's half (heap.cpp) and the scavenger's half (heap_scavenge.cpp). The heap
// list is under g_heaps_lock; a heap's lists and pages are its owner's, or the
// scavenger's while it holds the heap in kHeapBusy (see heap.h).
#pragma once

#include <atomic>
#include <cstdint>

#include "arena.h"
#include "debug.h"
#include "heap.h"
#include "lock.h"
#include "page.h"
#include "scavenger.h"

namespace scav {

extern Lock g_heaps_lock;
extern Heap* g_heaps;  // every heap ever made; heaps are never freed, only reused

// The page moves below run on the owner's slow paths (malloc's and free's), so they
// are inlined there; defined here so that the scavenger's half inlines the same code.
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

// Take a page out of whichever list holds it (a full page loses its full mark).
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

// Push every remote-free batch the calling thread holds (heap.h).
void remote_flush_all();

// A full page got free blocks (a remote free was collected): back in the queue.
void page_unfull(Heap* h, Page* pg);

// An empty page, out of every list, goes back to its arena (purged a delay from now,
// or by the current or next pass when due_now; held: kept under its kind's hold).
inline void page_release(Page* pg, bool due_now, bool held = false) {
  SCAV_ASSERT(pg->used == 0 && !pg->thread_free.load());
  pg->owner_tag.store(0, std::memory_order_relaxed);
  pg->where = kWhereNone;
  pg->free = nullptr;
  arena_free_page(pg, due_now, held);
}

// The cached page a put displaced, or one a collect or a visit takes: its one used
// block is the cached one, which nobody holds.
inline void cache_page_release(Page* pg, bool due_now, bool held = false) {
  SCAV_ASSERT(pg->where == kWhereCached && pg->used == 1);
  pg->used = 0;
  page_release(pg, due_now, held);
}

// The scavenger marks a cache slot a delay less an eighth after the put (first_look),
// then takes its page if the mark is still there an eighth later (recheck); see
// cache_visit. Both from one reading of the delay.
struct CacheTimes {
  uint64_t recheck;
  uint64_t first_look;
};
inline CacheTimes cache_times() {
  uint64_t d = purge_delay_ms();
  uint64_t r = d / 8 ? d / 8 : 1;
  return {r, d > r ? d - r : 0};
}

// Remote frees, full pages that got some, empty pages (to the arena) and the float.
// interiors: also purge inside the large free blocks of pages that stay (the heap's
// owner is parked or gone, and the caller holds the heap). Caller owns h or holds it
// busy (heap_scavenge.cpp).
void heap_collect_pages(Heap* h, bool due_now, bool interiors = false);

}  // namespace scav
