// alloc.h - the fast paths of malloc and free, inlined into the exported functions.
// They touch only the calling thread's heap (through the initial-exec TLS pointer) and
// its pages' owner fields: no atomic read-modify-write, no locks, no system calls.
#pragma once

#include <cstddef>
#include <cstdint>

#include "arena.h"
#include "debug.h"
#include "heap.h"
#include "huge.h"
#include "page.h"
#include "secure.h"
#include "sizeclass.h"

namespace scav {

// Class c's cache slot, its address held in one register: GCC otherwise computes it
// again from c for each field the fast paths touch (a shift and an add each time),
// which made a 128 KiB malloc/free pair 13% slower.
__attribute__((always_inline)) inline CacheSlot& cache_slot(Heap* h, unsigned c) {
  CacheSlot* s = &h->cache[c];
  asm("" : "+r"(s));
  return *s;
}

// The fast paths run on tls_fast_heap, the thread's heap, except with SCAV_SECURE=1,
// where it stays the empty heap: no fast allocation succeeds and no page's owner
// matches it, so every call goes to a slow path, which checks and records the block
// (alloc_slow_entry, heap_free_slow, huge_free). The fast paths read no option.
// h is tls_fast_heap (malloc) or tls_heap (the secure path through the same code);
// Slow is where a class with nothing to hand out goes.
template <void* (*Slow)(size_t)>
__attribute__((always_inline)) inline void* alloc_from(Heap* h, size_t n) {
  if (SCAV_LIKELY(n <= kLargeMax)) {
    unsigned c = class_of(n);
    Page* pg = h->current[c];
    if (SCAV_LIKELY(pg->free != nullptr)) return page_pop(pg);
    // The class's cached block: a thread that frees the last block of a page and
    // allocates the same class again. Owner side of the cache protocol (heap.cpp):
    // epoch, plain load and store, epoch; the cases it declines go the slow path.
    uint32_t e1 = h->steal_epoch.load(std::memory_order_acquire);
    CacheSlot& s = cache_slot(h, c);
    uintptr_t v = s.block.load(std::memory_order_relaxed);
    // A slot that holds a block has no floating page beside it (heap.h): the page of
    // the block floats next.
    if (SCAV_LIKELY(v != 0 && !(e1 & 1))) {
      s.block.store(0, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      uint32_t e2 = h->steal_epoch.load(std::memory_order_acquire);
      if (SCAV_UNLIKELY(e1 != e2)) return heap_alloc_overlap(n, c, v);
      s.floating = s.page;  // it stays kWhereCached
      return reinterpret_cast<void*>(v & ~kCacheMarked);
    }
    // The slot's last block is out and the class needs another (two blocks live at a
    // time): the floating page becomes the current one.
    Page* f = s.floating;
    if (f != nullptr && f->free != nullptr && h->queue[c].first == nullptr) {
      s.floating = nullptr;
      h->queue[c].first = h->queue[c].last = f;
      f->where = kWhereQueue;
      h->current[c] = f;
      return page_pop(f);
    }
    // The current page ran out and the next one in the queue has blocks: the first
    // step of heap_find_page's walk, without its call (a random live set of 10 000
    // blocks of 8 B-4 KiB takes it on one malloc in seven). The current page goes to
    // the back once, where frees refill it; the next one becomes current. Remote frees
    // into the current page wait in its thread_free for the walk.
    Page* nx = pg->next;
    if (nx != nullptr && nx->free != nullptr && !pg->rotated && tls_remote_live == 0) {
      queue_advance(h->queue[c]);
      pg->rotated = 1;
      nx->rotated = 0;
      h->current[c] = nx;
      return page_pop(nx);
    }
  }
  return Slow(n);
}

// Every allocation of the library goes through here.
__attribute__((always_inline)) inline void* alloc_fast(size_t n) {
  return alloc_from<alloc_slow_entry>(tls_fast_heap, n);
}

// Every free of the library goes through here.
__attribute__((always_inline)) inline void free_fast(void* p) {
  if (SCAV_UNLIKELY(p == nullptr)) return;
  uintptr_t* unit = unit_slices_of(p);
  if (SCAV_UNLIKELY(unit == nullptr)) {
    huge_free(p);
    return;
  }
  SliceRef ref = unit_ref_of(unit, p);
  Page* pg = slice_ref_page(ref);
  Heap* h = tls_fast_heap;
  // Owner, no interior pointers, not in the full list: push on the local list, or,
  // for the page's last used block, park the block in the heap's cache.
  if (SCAV_LIKELY(pg->owner_tag.load(std::memory_order_relaxed) == reinterpret_cast<uintptr_t>(h))) {
    Block* b = static_cast<Block*>(p);
    uint32_t u = pg->used;
    if (SCAV_LIKELY(u > 1)) {
      b->next = pg->free;
      pg->free = b;
      pg->used = u - 1;
      return;
    }
    // The page's last block. When the slot holds 0 and the page floats or is its
    // class's only page, the put is a few plain stores: the scavenger only ever
    // empties or marks a slot, so a put into an empty one cannot lose a block to it.
    // The heap's deadline is read after the store (store, then load: a pass resets the
    // deadline, then fences every thread, then reads the slots, so it sees this block
    // or this load sees its reset and re-arms). Without membarrier no slot holds 0.
    unsigned c = slice_ref_class(ref);
    CacheSlot& s = cache_slot(h, c);
    if (SCAV_LIKELY(s.block.load(std::memory_order_relaxed) == 0)) {
      bool put = true;
      if (SCAV_LIKELY(s.floating == pg)) {
        // The page floats (page.h): its block comes back to the slot. Asked of the
        // owner's note, not of where: a cached page's slot is also empty for a moment
        // while the scavenger takes it, and its block freed again then is a double free.
        SCAV_ASSERT(pg->where == kWhereCached && s.page == pg);
        s.floating = nullptr;
      } else if (pg->where == kWhereQueue && pg->prev == nullptr && pg->next == nullptr &&
                 s.floating == nullptr) {
        h->queue[c].first = h->queue[c].last = nullptr;
        h->current[c] = &g_empty_page;
        pg->where = kWhereCached;
        s.page = pg;  // not always pg yet: a steal may have emptied a later put
      } else {
        put = false;
      }
      if (put) {
        s.block.store(reinterpret_cast<uintptr_t>(b), std::memory_order_release);
        std::atomic_signal_fence(std::memory_order_seq_cst);
        if (SCAV_UNLIKELY(h->purge_expire.load(std::memory_order_relaxed) == 0)) heap_arm(h);
        return;
      }
    }
    heap_free_last(h, pg, b);
    return;
  }
  heap_free_slow(pg, p);
}

inline size_t usable_size(const void* p) {
  if (!p) return 0;
  uintptr_t* unit = unit_slices_of(p);
  if (!unit) return huge_usable(p);
  Page* pg = slice_ref_page(unit_ref_of(unit, p));
  // Without the aligned tag every block was handed out at its start: no division.
  if (!(pg->owner_tag.load(std::memory_order_relaxed) & kTagAligned)) return pg->bsize;
  Block* b = page_block_of(pg, const_cast<void*>(p));
  return pg->bsize - size_t(static_cast<const uint8_t*>(p) - reinterpret_cast<uint8_t*>(b));
}

}  // namespace scav
