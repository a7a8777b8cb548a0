// heap.h - per-thread heaps: for each size class a queue of pages with free blocks, a
// list of full pages, and a one-block cache. A heap belongs to one thread (state
// kHeapOwned) and is touched by it without atomics; the scavenger may take it over
// (kHeapBusy) only while the owner is idle or gone, and may take cached blocks always.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "page.h"
#include "sizeclass.h"

namespace scav {

enum HeapState : uint32_t {
  kHeapOwned = 0,      // its thread runs and owns every owner field
  kHeapIdle = 1,       // its thread is between scav_thread_idle_start and _end
  kHeapAbandoned = 2,  // its thread exited; a new thread may adopt it
  kHeapBusy = 3,       // the scavenger holds it (was idle or abandoned)
};

struct PageList {
  Page* first = nullptr;
  Page* last = nullptr;
};

extern Page g_empty_page;

// The queue's first page goes to its back and the second comes first (two pages at
// least).
__attribute__((always_inline)) inline void queue_advance(PageList& q) {
  Page* pg = q.first;
  Page* nx = pg->next;
  q.first = nx;
  nx->prev = nullptr;
  pg->next = nullptr;
  pg->prev = q.last;
  q.last->next = pg;
  q.last = pg;
}

// A cache slot holds the address of a block, with kCacheMarked set by the scavenger
// when it has seen the slot and found it untouched since the owner's put, or nothing:
// 0, or kCacheMarked alone when membarrier is missing (the fast put, whose ordering
// relies on the scavenger's fence, only takes a slot that holds 0).
constexpr uintptr_t kCacheMarked = 1;
inline bool slot_empty(uintptr_t v) { return (v & ~kCacheMarked) == 0; }

// Frees of other heaps' small blocks gathered by a thread, one page per entry (entry
// cls % kRemoteBatches), so that a run of frees into one page costs one CAS on its
// thread_free instead of one each: head..tail are count blocks of page, linked. A batch
// is pushed when it reaches kRemoteBatchMax, when a free of another page of its classes
// comes, and on the thread's malloc slow path, hand-off, exit and collect; until then
// its blocks count as used in their page, at most kRemoteBatches pages of blocks up to
// kRemoteBatchSize (heap_free_remote). The batches are the thread's (TLS), not its
// heap's: a thread that only frees (a consumer) gathers without a heap, which would
// cost it page faults of its own.
constexpr unsigned kRemoteBatches = 8;
constexpr uint32_t kRemoteBatchMax = 64;
constexpr uint32_t kRemoteBatchSize = 1024;  // larger blocks are pushed one by one
constexpr unsigned kRemoteBatchClassMax = class_of_formula(kRemoteBatchSize);
static_assert(class_size(kRemoteBatchClassMax) == kRemoteBatchSize);
struct RemoteBatch {
  Page* page = nullptr;
  Block* head = nullptr;
  Block* tail = nullptr;
  uint32_t count = 0;
  uint16_t cls = 0;  // page's class
};

// One class's cache: the slot, shared with the scavenger, and the owner's notes.
struct CacheSlot {
  std::atomic<uintptr_t> block{0};  // a block's address [| kCacheMarked], or empty
  Page* page = nullptr;             // the page of `block`
  Page* floating = nullptr;         // the page of the block last taken from the slot
  uintptr_t scav_seen = 0;          // the scavenger's, under the purge guard: the block it last marked
};
static_assert(sizeof(CacheSlot) == 32);

// Invariants (owner view, heap_check in debug builds):
//   current[c] == (queue[c].first ? queue[c].first : &g_empty_page)
//   every page in queue[c] has where == kWhereQueue and no kTagFull,
//   every page in full[c] has where == kWhereFull, kTagFull and in_full == 1,
//   cache[c].block is empty, or (block & ~kCacheMarked) is the one used block of
//     cache[c].page: used == 1, where == kWhereCached, cls == c, in no list,
//   cache[c].floating is null or cache[c].page, where == kWhereCached, used == 1 (the
//     block taken from the slot; the owner does not allocate from a floating page), in
//     no list, and null while the slot holds a block (a put links the floating page
//     into the queue first, so the fast take need not look at it); no other page of
//     the heap floats.
//   steal_epoch is odd for good when membarrier is missing (the fast take then never
//   runs, nor the fast put: empty slots hold kCacheMarked; both sides use atomic
//   exchange and CAS), else odd only during a steal.
// The cache is the lane of a thread that frees the last block of a page and allocates
// the same class again (one 128 KiB buffer per request): the block comes back with a
// few plain loads and stores and no list is touched while one block cycles. The
// scavenger may take a cached page (the cache protocol in heap.cpp) when the slot sat
// untouched; that is how a thread that frees and then sleeps without calling the
// allocator gets its pages back. purge_expire follows the protocol of scavenger.h:
// armed by the first put after a visit (for the scavenger's marking look, the delay
// less an eighth later), by a remote free into an idle or abandoned heap, and by the
// scavenger itself for slots it marked.
struct alignas(64) Heap {
  Page* current[kNumClasses];
  CacheSlot cache[kNumClasses];
  alignas(64) std::atomic<uint32_t> steal_epoch{0};  // odd while the scavenger takes slots
  std::atomic<uint64_t> purge_expire{0};
  // When the owner last read the clock in a slow put (a page leaving its list or
  // displacing another): the scavenger puts off marking the slots of a heap that was
  // this busy less than a delay ago (see cache_visit).
  std::atomic<uint64_t> active_ms{0};
  PageList queue[kNumClasses];
  PageList full[kNumClasses];
  std::atomic<uint64_t> full_remote[2];  // classes whose full list got a remote free
  std::atomic<uint32_t> state{kHeapOwned};
  std::atomic<uint32_t> remote_pending{0};  // a remote free arrived since last idle
  // The scavenger's notes, touched only in purge passes (under the purge guard): the
  // slots it marked at its latest marking visit and when that was, the slots whose
  // marking it put off once, and when a slot it marked under a hold may be taken.
  uint64_t scav_marked[2] = {0, 0};
  uint64_t scav_mark_ms = 0;
  uint64_t scav_deferred[2] = {0, 0};
  // The slots the latest visit found to take, and of those the ones marked under a hold.
  uint64_t scav_take[2] = {0, 0};
  uint64_t scav_take_held[2] = {0, 0};
  // A slot marked under its kind's hold is not taken before this (0: no hold).
  uint64_t scav_keep_until[kNumClasses] = {};
  Heap* next_all = nullptr;

  constexpr Heap() : current{}, cache{}, queue{}, full{}, full_remote{} {
    for (unsigned c = 0; c < kNumClasses; c++) current[c] = &g_empty_page;
  }
};

// The heap of a thread that has not allocated yet: every current page is the empty
// sentinel and every slot empty, so the fast path falls into the slow path, which sets
// up the real heap.
extern Heap g_empty_heap;
extern __thread Heap* tls_heap;
// The heap the fast paths of alloc.h use: tls_heap, or g_empty_heap for good with
// SCAV_SECURE=1 (every call then takes a slow path, which checks). Set with tls_heap.
extern __thread Heap* tls_fast_heap;

// The calling thread's batches of remote frees (above); bit i of tls_remote_live:
// tls_remote[i] holds a batch.
extern __thread RemoteBatch tls_remote[kRemoteBatches];
extern __thread uint32_t tls_remote_live;

// Whether owners may use plain stores on cache slots (membarrier is available).
extern bool g_asym_fence;

void* heap_alloc_slow(size_t size);
// A cache put found the heap unarmed: schedule the scavenger's next look at it.
void heap_arm(Heap* h);
void heap_free_last(Heap* h, Page* pg, Block* b);
void heap_free_slow(Page* pg, void* p);
void heap_mark_aligned(Page* pg);
// A steal overlapped the owner's slot access: wait for it to end and tell whether the
// page the owner touched is still its own.
bool heap_steal_wait(Heap* h, Page* pg);

// The fast path took v from class c's slot while a steal ran: finish the allocation.
void* heap_alloc_overlap(size_t size, unsigned c, uintptr_t v);

// Give back empty pages and cached blocks of h and collect remote frees. Caller owns h
// (or holds kHeapBusy). due_now: the pages are purged by the current or next pass.
void heap_collect(Heap* h, bool due_now);
void heap_collect_current_thread();

// Purge-pass part (heap_scavenge.cpp): visit heaps that are due (all when force).
// Caller holds the guard.
void heaps_purge(bool force, bool scan, uint64_t now);
uint64_t heaps_earliest_expire();

void heap_fence_init();
// Fork child, before the locks are reset: register for membarrier again.
void heap_fence_fork_child();

void heap_thread_exit(void* heap);
void heap_idle_start();
void heap_idle_end();

void heaps_lock();
void heaps_unlock();
void heaps_reset_lock();

#ifdef SCAV_DEBUG
void heap_check(Heap* h, unsigned c);
#else
inline void heap_check(Heap*, unsigned) {}
#endif

}  // namespace scav
