// alloc.h - the fast paths of malloc and free, inlined into the exported functions.
// They touch only the calling thread's heap (through the initial-exec TLS pointer) and
// its pages' owner fields: no atomics beyond relaxed loads, no locks, no system calls.
#pragma once

#include <cstddef>
#include <cstdint>

#include "arena.h"
#include "debug.h"
#include "heap.h"
#include "huge.h"
#include "page.h"
#include "sizeclass.h"

namespace scav {

__attribute__((always_inline)) inline void* alloc_fast(size_t n) {
  if (SCAV_LIKELY(n <= kLargeMax)) {
    Heap* h = tls_heap;
    Page* pg = h->current[class_of(n)];
    Block* b = pg->free;
    if (SCAV_LIKELY(b != nullptr)) {
      pg->free = b->next;
      pg->used++;
      return b;
    }
  }
  return heap_alloc_slow(n);
}

__attribute__((always_inline)) inline void free_fast(void* p) {
  if (SCAV_UNLIKELY(p == nullptr)) return;
  Page** unit = unit_slices_of(p);
  if (SCAV_UNLIKELY(unit == nullptr)) {
    huge_free(p);
    return;
  }
  Page* pg = unit_page_of(unit, p);
  Heap* h = tls_heap;
  // Owner, no interior pointers, not in the full list: push on the local list.
  if (SCAV_LIKELY(pg->owner_tag.load(std::memory_order_relaxed) == reinterpret_cast<uintptr_t>(h))) {
    Block* b = static_cast<Block*>(p);
    b->next = pg->free;
    pg->free = b;
    if (SCAV_UNLIKELY(--pg->used == 0)) heap_page_emptied(h, pg);
    return;
  }
  heap_free_slow(pg, p);
}

inline size_t usable_size(const void* p) {
  if (!p) return 0;
  Arena* a = arena_of(p);
  if (!a) return huge_usable(p);
  Page* pg = arena_page_of(a, p);
  Block* b = page_block_of(pg, const_cast<void*>(p));
  return pg->bsize - size_t(static_cast<const uint8_t*>(p) - reinterpret_cast<uint8_t*>(b));
}

}  // namespace scav
