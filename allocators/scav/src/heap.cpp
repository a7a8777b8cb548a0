// heap.cpp - the owner's half of per-thread heaps: the slow paths of malloc and free
// (finding or making a page with free blocks, full and empty pages, the owner's side of
// the cache protocol, remote frees), thread exit and adoption, idle hand-off. A heap's
// owner fields are touched only by its thread (another thread's free reaches a page
// through thread_free and in_full, atomics only); the heap list is under g_heaps_lock.
// The scavenger's visits, which take heaps over, are in heap_scavenge.cpp.
#include "heap.h"

#include <cerrno>
#include <new>

#include "arena.h"
#include "debug.h"
#include "heap_internal.h"
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
__thread RemoteBatch tls_remote[kRemoteBatches];
__thread uint32_t tls_remote_live = 0;
// The thread ran its exit hook (heap_thread_exit): it gathers no more batches, which
// nothing would push. tls_exit_hook: the hook is set for a thread without a heap.
__thread bool tls_heap_exited = false;
__thread bool tls_exit_hook = false;
bool g_asym_fence = false;  // set once at process init, before any heap exists
constinit Lock g_heaps_lock;
Heap* g_heaps = nullptr;

namespace {

char* g_heap_chunk = nullptr;
size_t g_heap_chunk_left = 0;

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
  pg->rotated = 0;
  pg->thread_free.store(nullptr, std::memory_order_relaxed);
  pg->in_full.store(0, std::memory_order_relaxed);
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

// The cache protocol. A slot is shared between the owner, which uses it on every put
// and take (a malloc/free cycle of one 128 KiB buffer), and the scavenger, which comes
// at most a few times per purge delay. So the owner pays no locked instruction: it
// reads the heap's steal epoch, does a plain load and store on the slot, and reads the
// epoch again. To take slots, the scavenger makes the epoch odd, runs a membarrier (a
// full fence on every thread: an asymmetric Dekker pair), CASes slots, and makes the
// epoch even; it marks slots (a CAS that sets kCacheMarked) without the epoch, since a
// mark the owner's store overwrites decides nothing wrongly (cache_visit). If
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
    SCAV_ASSERT(h->cache[c].floating == nullptr);  // the slot held a block (heap.h)
    h->cache[c].floating = pg;  // it stays kWhereCached
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
        pg->rotated = 0;
        if (pg != h->queue[c].first) {
          list_remove(h->queue[c], pg);
          list_push_front(h->queue[c], pg);
        }
        sync_current(h, c);
        return pg;
      }
      Page* next = pg->next;
      // A page that ran out while others have room goes to the back once before the
      // full list (malloc's fast path does this step itself when the next page has a
      // free block): the move to full is a full fence (page_to_full's Dekker pair) and
      // a free into a full page takes the slow path back, and a page whose blocks are
      // replaced at random runs out and gets one back all the time. At the back, a
      // local free is a plain push again and a remote one waits in thread_free for
      // this walk's next lap; a page still without a block then goes to full.
      if (!pg->rotated && next) {
        pg->rotated = 1;
        list_remove(h->queue[c], pg);
        list_push_back(h->queue[c], pg);
        pg = next;
        continue;
      }
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
    pg = arena_alloc_page(class_slices(c));
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

// Push head..tail, blocks of pg that other threads hold no more, with one CAS.
void page_free_remote(Page* pg, unsigned c, Block* head, Block* tail) {
  // Read the owner and the class while our blocks keep the page from being released:
  // once they are pushed, the owner (or a pass) may collect them, find the page
  // empty and give it back, so after the push the page's owner fields may be gone.
  // Heaps are never unmapped, so touching h afterwards is safe; a flag set on a heap
  // whose page left in the meantime only costs its owner a look.
  Heap* h = page_heap(pg);
  SCAV_ASSERT(h != nullptr && c == pg->cls);
  Block* old = pg->thread_free.load(std::memory_order_relaxed);
  do {
    tail->next = old;
  } while (!pg->thread_free.compare_exchange_weak(old, head, std::memory_order_seq_cst,
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

void remote_flush(unsigned i) {
  RemoteBatch& rb = tls_remote[i];
  page_free_remote(rb.page, rb.cls, rb.head, rb.tail);
  if (rb.count > 1) stat_add(g_stats.remote_batched, rb.count);
  rb = RemoteBatch{};
  tls_remote_live &= ~(1u << i);
}

// Batches must be pushed when their thread exits: a thread without a heap has no exit
// hook yet (its key's value is null), so it gets one before its first batch.
bool exit_hook_set() {
  if (tls_exit_hook || tls_heap != &g_empty_heap) return true;
  if (!process_thread_attach(&g_empty_heap)) return false;
  tls_exit_hook = true;
  return true;
}

// A free of block b of pg, a page of another heap: gathered into the thread's batch of
// pg's class (see heap.h) while pg's owner runs, which collects remote frees only when
// it looks for free blocks anyway. Pushed at once: blocks above kRemoteBatchSize (a
// batch of them would keep megabytes from their owner), into a heap that is idle or
// abandoned, whose pages wait for the scavenger: it must see the free now, and by a
// thread past its exit hook or whose own heap is handed off (nothing would push the
// batch). The owner's state is read when a batch
// starts: a batch of a heap that goes idle meanwhile is pushed at its next flush, as
// the blocks it held already were. c is pg's class (from the slice map): the page's
// owner line, which the owner's malloc writes, is not read here.
void heap_free_remote(Page* pg, unsigned c, Block* b) {
  const unsigned i = c % kRemoteBatches;
  RemoteBatch& rb = tls_remote[i];
  if (rb.page == pg) {
    b->next = rb.head;
    rb.head = b;
    if (++rb.count == kRemoteBatchMax) remote_flush(i);
    return;
  }
  if (c > kRemoteBatchClassMax || SCAV_UNLIKELY(tls_heap_exited) ||
      page_heap(pg)->state.load(std::memory_order_relaxed) != kHeapOwned ||
      tls_heap->state.load(std::memory_order_relaxed) != kHeapOwned || !exit_hook_set()) {
    page_free_remote(pg, c, b, b);
    return;
  }
  if (rb.page) remote_flush(i);
  b->next = nullptr;
  rb = RemoteBatch{pg, b, b, 1, uint16_t(c)};
  tls_remote_live |= 1u << i;
}

}  // namespace

void remote_flush_all() {
  for (unsigned i = 0; i < kRemoteBatches; i++)
    if (tls_remote_live & (1u << i)) remote_flush(i);
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
  if (tls_remote_live) remote_flush_all();
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
    if (pg) p = page_pop(pg);
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

void heap_free_last(Heap* h, Page* pg, Block* b) {
  // A cached page that does not float has its one used block in the slot: nobody
  // holds a block of it, so this is the lone block freed again. Left alone, the put
  // would displace the page from its own slot and release it while the slot still
  // points into it.
  unsigned c = pg->cls;
  const bool floats = h->cache[c].floating == pg;  // then kWhereCached (heap.h)
  if (SCAV_UNLIKELY(!floats && pg->where == kWhereCached)) pointer_fail("double free of", b);
  SCAV_ASSERT(pg->used == 1 && !pg->thread_free.load(std::memory_order_relaxed));
  if (floats) {
    h->cache[c].floating = nullptr;
  } else {
    page_unlink(h, pg);
    float_link(h, c);  // a slot that holds a block has no floating page
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

namespace {

__attribute__((noinline)) void free_slow_rest(Page* pg, void* p) {
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
  // The class from the slice map, whose lines free_fast just read, not from the
  // page's owner line (heap_free_remote).
  heap_free_remote(pg, slice_ref_class(unit_ref_of(unit_slices_of(p), p)), b);
}

}  // namespace

void heap_free_slow(Page* pg, void* p) {
  // A remote free into the page this thread is gathering a batch of, short of full:
  // pushed here, where no call follows, so that it saves no registers (the consumer
  // of batch_handoff_64b_1cpu spent a quarter of its time in this function). The
  // batch holds blocks of pg, so pg is another heap's and in use. With SCAV_SECURE=1
  // every free goes through the checks.
  RemoteBatch& rb = tls_remote[slice_ref_class(unit_ref_of(unit_slices_of(p), p)) % kRemoteBatches];
  if (rb.page == pg && rb.count + 1 < kRemoteBatchMax &&
      !(pg->owner_tag.load(std::memory_order_relaxed) & kTagAligned) && !secure_on()) {
    Block* b = static_cast<Block*>(p);
    b->next = rb.head;
    rb.head = b;
    rb.count++;
    return;
  }
  free_slow_rest(pg, p);
}

void heap_mark_aligned(Page* pg) {
  pg->owner_tag.store(pg->owner_tag.load(std::memory_order_relaxed) | kTagAligned,
                      std::memory_order_relaxed);
}

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
  if (tls_remote_live) remote_flush_all();
  Heap* h = tls_heap;
  if (h == &g_empty_heap) return;
  heap_collect(h, true);
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
  if (tls_remote_live) remote_flush_all();
  tls_heap_exited = true;
  Heap* h = static_cast<Heap*>(arg);
  if (h == &g_empty_heap || tls_heap != h) return;  // a thread without a heap: batches only
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
  // A parked thread's batches would keep their blocks from their owners.
  if (tls_remote_live) remote_flush_all();
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
    SCAV_ASSERT(f == h->cache[c].page);
    SCAV_ASSERT(f->where == kWhereCached && f->cls == c && page_heap(f) == h && f->used == 1);
    SCAV_ASSERT(f->next == nullptr && f->prev == nullptr);
  }
  // The slot may be emptied by the scavenger at any time, and the page it takes may be
  // another heap's a moment later: the fields read are only worth checking when no
  // steal ran while they were read (the same two epoch reads as the owner's access).
  uint32_t e1 = h->steal_epoch.load(std::memory_order_acquire);
  uintptr_t v = h->cache[c].block.load(std::memory_order_acquire);
  if (slot_empty(v) || (e1 & 1)) return;
  SCAV_ASSERT(h->cache[c].floating == nullptr);  // only the owner fills a slot
  Page* pg = h->cache[c].page;
  bool ok = pg->where == kWhereCached && pg->cls == c && pg->used == 1 &&
            page_block_of(pg, reinterpret_cast<void*>(v & ~kCacheMarked)) ==
                reinterpret_cast<Block*>(v & ~kCacheMarked);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (h->steal_epoch.load(std::memory_order_relaxed) == e1) SCAV_ASSERT(ok);
}
#endif

}  // namespace scav
