// init.cpp - process init (options, thread key, fork handlers) and the fork protocol.
// g_init_state is shared (atomics); the fork handlers run on the forking thread and
// take every lock of the allocator in one global order:
//   purge guard -> heap list -> huge cache -> arena creation -> each arena.
#include "init.h"

#include <pthread.h>

#include <atomic>

#include "arena.h"
#include "heap.h"
#include "huge.h"
#include "os.h"
#include "options.h"
#include "scavenger.h"

namespace scav {
namespace {

std::atomic<int> g_init_state{0};  // 0 none, 1 running, 2 done
std::atomic<bool> g_key_ready{false};
pthread_key_t g_heap_key;

void fork_prepare() {
  purge_fork_prepare();
  heaps_lock();
  huge_lock();
  arenas_lock_all();
}

void fork_parent() {
  arenas_unlock_all();
  huge_unlock();
  heaps_unlock();
  purge_fork_parent();
}

void fork_child() {
  // The child is a new process for membarrier: register again (heap.cpp falls back to
  // atomic cache accesses should that fail).
  heap_fence_fork_child();
  arenas_reset_locks();
  huge_reset_lock();
  heaps_reset_lock();
  purge_fork_child();
}

// Runs once the C library is initialised (it is a dependency of ours, so its
// constructors ran first): from here on the scavenger's thread may be created.
__attribute__((constructor)) void libc_ready() { scavenger_libc_ready(); }

}  // namespace

void process_init() {
  if (SCAV_LIKELY(g_init_state.load(std::memory_order_acquire) == 2)) return;
  int z = 0;
  if (!g_init_state.compare_exchange_strong(z, 1, std::memory_order_acq_rel)) {
    while (g_init_state.load(std::memory_order_acquire) != 2) os::yield();
    return;
  }
  options_init();
  heap_fence_init();
  // pthread_key_create does not allocate; make the key before anyone can need it.
  if (pthread_key_create(&g_heap_key, heap_thread_exit) == 0)
    g_key_ready.store(true, std::memory_order_release);
  g_init_state.store(2, std::memory_order_release);
  // May allocate (glibc grows its handler list with malloc; setenv): we are initialised
  // now.
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  options_mark_warned();
}

bool process_thread_attach(Heap* h) {
  // The value must be non-null for the destructor to run at thread exit. For a key
  // index below 32 glibc stores it in the thread descriptor without allocating.
  return g_key_ready.load(std::memory_order_acquire) && pthread_setspecific(g_heap_key, h) == 0;
}

}  // namespace scav
