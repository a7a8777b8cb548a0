// heap.h - per-thread heaps: for each size class a queue of pages with free blocks, a
// list of full pages and one retired (empty) page. A heap belongs to one thread (state
// kHeapOwned) and is touched by it without atomics; the scavenger may take it over
// (kHeapBusy) only while the owner is idle or gone, and may steal retired pages always.
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

// Invariants (owner view):
//   current[c] == (queue[c].first ? queue[c].first : &g_empty_page)
//   every page in queue[c] has where == kWhereQueue and no kTagFull,
//   every page in full[c] has where == kWhereFull, kTagFull and in_full == 1,
//   retired[c] is null or a page of class c with used == 0, where == kWhereRetired.
// purge_expire follows the protocol of scavenger.h: armed when a page is retired, when
// an idle thread has empty pages, or when a remote free reaches an idle or abandoned
// heap. visit_gen counts the scavenger's visits; a retired page is stolen once it has
// sat through a whole visit interval (retire_gen + 1 < visit_gen).
struct alignas(64) Heap {
  Page* current[kNumClasses];
  PageList queue[kNumClasses];
  PageList full[kNumClasses];
  std::atomic<Page*> retired[kNumClasses];
  std::atomic<uint64_t> full_remote[2];  // classes whose full list got a remote free
  std::atomic<uint32_t> state{kHeapOwned};
  std::atomic<uint32_t> visit_gen{0};
  std::atomic<uint32_t> remote_pending{0};  // a remote free arrived since last idle
  std::atomic<uint32_t> steal_epoch{0};     // odd while another thread takes retired pages
  std::atomic<uint64_t> purge_expire{0};
  bool has_empty = false;  // a small current page became empty
  Heap* next_all = nullptr;

  constexpr Heap() : current{}, queue{}, full{}, retired{}, full_remote{} {
    for (unsigned c = 0; c < kNumClasses; c++) current[c] = &g_empty_page;
  }
};

// The heap of a thread that has not allocated yet: every current page is the empty
// sentinel, so the fast path falls into the slow path, which sets up the real heap.
extern Heap g_empty_heap;
extern __thread Heap* tls_heap;

void* heap_alloc_slow(size_t size);
void heap_page_emptied(Heap* h, Page* pg);
void heap_free_slow(Page* pg, void* p);
void heap_mark_aligned(Page* pg);

// Return empty pages of h to the arenas (all of them when release_all, else keeping
// the small current ones) and collect remote frees. Caller owns h (or holds kHeapBusy).
void heap_collect(Heap* h, bool release_all, bool due_now);
void heap_collect_current_thread(bool release_all);

// Purge-pass part: visit heaps that are due (all when force). Caller holds the guard.
void heaps_purge(bool force, bool scan, uint64_t now);
uint64_t heaps_earliest_expire();

// Whether owners may use plain stores on retired slots (membarrier is available).
extern bool g_asym_fence;
void heap_fence_init();

void heap_thread_exit(void* heap);
void heap_idle_start();
void heap_idle_end();

void heaps_lock();
void heaps_unlock();
void heaps_reset_lock();

}  // namespace scav
