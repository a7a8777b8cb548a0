// page.h - a page: a run of arena slices cut into blocks of one size class.
// The owning heap's thread (or whoever holds that heap in state kBusy) touches the
// owner fields without atomics; any other thread touches only thread_free and in_full.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "debug.h"
#include "sizeclass.h"

namespace scav {

struct Heap;
struct Arena;

struct Block {
  Block* next;
};

// owner_tag = address of the owning heap | flags; 0 when the page is not owned. The
// free fast path compares the whole tag with the caller's heap, so any flag sends the
// free to the slow path, which is where aligned blocks and full pages are handled.
constexpr uintptr_t kTagAligned = 1;  // some block was handed out at an interior offset
constexpr uintptr_t kTagFull = 2;     // the page sits in its heap's full list
constexpr uintptr_t kTagMask = 3;

// Where an owned page sits in its heap (see heap.h):
//   kWhereQueue  - in queue[cls], may have free blocks
//   kWhereFull   - in full[cls], no free block (kTagFull set)
//   kWhereCached - in no list; its one used block sits in the heap's cache slot, or
//                  was handed out from it: the page floats (the heap's cache_floating;
//                  the slot is then empty)
enum PageWhere : uint8_t { kWhereNone = 0, kWhereQueue, kWhereFull, kWhereCached };

// Invariant (owner view, checked by page_check in debug builds):
//   used + |free| + |thread_free| + (capacity - carved) == capacity
// i.e. every carved block is handed out (used), in the owner's free list, or in the
// list other threads push to. used == 0 with thread_free empty means the page is empty.
struct alignas(64) Page {
  // Owner cache line: what malloc and the local free touch.
  Block* free;
  uint32_t used;
  uint32_t capacity;
  uint8_t* start;
  uint32_t bsize;
  uint32_t carved;
  Page* next;  // links in the heap's class queue or full list
  Page* prev;
  uint16_t cls;
  uint8_t kind;
  uint8_t where;
  uint8_t rotated;  // moved to its queue's back with no free block (heap_find_page, alloc_from)
  uint8_t pad_[3];
  uint64_t pad2_;

  // Shared cache line: read by every free, written by other threads' frees and by the
  // owner's rare tag changes. A thread that frees another's blocks must not pull in
  // the line the owner's malloc writes on every call.
  alignas(64) std::atomic<uintptr_t> owner_tag;
  std::atomic<Block*> thread_free;
  std::atomic<uint32_t> in_full;  // mirrors kTagFull for remote frees (Dekker with push)
  uint32_t first_slice;            // immutable while the page is allocated
  uint32_t slice_count;
  Arena* arena;
};
static_assert(sizeof(Page) == 128);

inline Heap* page_heap(const Page* pg) {
  return reinterpret_cast<Heap*>(pg->owner_tag.load(std::memory_order_relaxed) & ~kTagMask);
}

inline Block* page_block_of(const Page* pg, void* p) {
  uintptr_t off = reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(pg->start);
  return reinterpret_cast<Block*>(pg->start + (off / pg->bsize) * pg->bsize);
}

// Hand out the first block of the owner's free list (not empty).
__attribute__((always_inline)) inline Block* page_pop(Page* pg) {
  Block* b = pg->free;
  pg->free = b->next;
  pg->used++;
  return b;
}

// Move what other threads freed into the owner's list. Returns the number of blocks.
inline uint32_t page_collect(Page* pg) {
  if (!pg->thread_free.load(std::memory_order_relaxed)) return 0;
  Block* tf = pg->thread_free.exchange(nullptr, std::memory_order_acquire);
  if (!tf) return 0;
  uint32_t n = 1;
  Block* tail = tf;
  while (tail->next) {
    tail = tail->next;
    n++;
  }
  tail->next = pg->free;
  pg->free = tf;
  SCAV_ASSERT(pg->used >= n);
  pg->used -= n;
  return n;
}

// Carve more blocks from the untouched tail: the first time only what fits in the
// page's first OS page (a thread that uses a few blocks of a class touches 4 KiB of
// it, not 16: what a thread costs), then about 16 KiB at a time, so a fresh page
// does not become resident at once.
inline void page_extend(Page* pg) {
  uint32_t left = pg->capacity - pg->carved;
  if (!left) return;
  uint32_t n = uint32_t((pg->carved ? 16384 : 4096) / pg->bsize);
  if (n < 1) n = 1;
  if (n > left) n = left;
  uint8_t* p = pg->start + size_t(pg->carved) * pg->bsize;
  Block* head = pg->free;
  // Build in address order: the first block handed out is the lowest.
  for (uint32_t i = n; i-- > 0;) {
    Block* b = reinterpret_cast<Block*>(p + size_t(i) * pg->bsize);
    b->next = head;
    head = b;
  }
  pg->free = head;
  pg->carved += n;
}

#ifdef SCAV_DEBUG
void page_check(const Page* pg);
#else
inline void page_check(const Page*) {}
#endif

}  // namespace scav
