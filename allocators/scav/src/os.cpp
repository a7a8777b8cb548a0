// os.cpp - the allocator's only door to the kernel: mmap, munmap, madvise, mincore,
// mremap, futex, membarrier, prctl, unshare, setns, write, and pthread_create for the
// scavenger's thread. Stateless but for the one thread's start block; any thread.
//
// Contract, for every function: addresses and sizes are page-aligned; the result is 0
// or a positive errno. The calls are raw `syscall` instructions, not libc wrappers: a
// libc wrapper writes errno, which malloc must leave alone on success, and nothing here
// may allocate or lock, since it runs inside malloc. The one exception is the
// scavenger's thread, made with pthread_create (see there).
#include "os.h"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include <cerrno>

#include "debug.h"

#if !defined(__x86_64__)
#error "scav's os layer implements raw system calls for x86-64 Linux only"
#endif

namespace scav::os {
namespace {

inline long sys(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0,
                long f = 0) {
  long ret;
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  register long r9 asm("r9") = f;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return ret;
}

inline int err(long r) { return r < 0 && r > -4096 ? int(-r) : 0; }

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer (the scav-tsan preset) keeps its synchronisation metadata for the
// mappings it sees: ours must go through its interceptors, or the arena locks in them
// look like no synchronisation at all. Its wrappers write errno; nothing else differs.
void* mmap_raw(void* hint, size_t size, int prot, int flags) {
  void* p = ::mmap(hint, size, prot, flags, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}
long unmap_raw(uintptr_t p, size_t size) { return ::munmap(reinterpret_cast<void*>(p), size) ? -ENOMEM : 0; }
#else
void* mmap_raw(void* hint, size_t size, int prot, int flags) {
  long r = sys(SYS_mmap, long(hint), long(size), prot, flags, -1, 0);
  if (r < 0 && r > -4096) return nullptr;
  return reinterpret_cast<void*>(r);
}
long unmap_raw(uintptr_t p, size_t size) { return sys(SYS_munmap, long(p), long(size)); }
#endif

int map_anon(size_t size, int extra_flags, void** out) {
  void* p = mmap_raw(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra_flags);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

}  // namespace

int map_fresh(size_t size, void** out) {
  // Without MAP_NORESERVE the kernel applies its overcommit policy: under the default
  // heuristic a mapping far beyond RAM and swap fails here (malloc returns null with
  // ENOMEM, as glibc's does) instead of succeeding and failing at a page fault later.
  return map_anon(size, 0, out);
}

int reserve(size_t size, size_t align, void** out) {
  // MAP_NORESERVE: an arena reserves far more than it touches; commit is per touched
  // page and "committed" in our bitmaps means "may be resident".
  if (align <= kPageSize) return map_anon(size, MAP_NORESERVE, out);
  if (size + align < size) return ENOMEM;
  void* raw;
  if (int e = map_anon(size + align, MAP_NORESERVE, &raw)) return e;
  uintptr_t b = reinterpret_cast<uintptr_t>(raw);
  uintptr_t a = (b + align - 1) & ~(uintptr_t(align) - 1);
  // Trim both ends so the mapping is exactly [a, a+size): the kernel keeps one VMA.
  if (a > b) unmap_raw(b, a - b);
  uintptr_t end = b + size + align;
  if (end > a + size) unmap_raw(a + size, end - (a + size));
  *out = reinterpret_cast<void*>(a);
  return 0;
}

uint64_t address_space_limit() {
  struct { uint64_t cur, max; } lim;
  if (sys(SYS_prlimit64, 0, RLIMIT_AS, 0, long(&lim)) != 0) return ~uint64_t(0);
  return lim.cur;  // RLIM_INFINITY is ~0
}

int unmap(void* p, size_t size) { return err(unmap_raw(reinterpret_cast<uintptr_t>(p), size)); }

int purge(void* p, size_t size, bool lazy) {
  // MADV_DONTNEED drops the pages at once, so RSS falls now and the next touch gets a
  // zero page. MADV_FREE is lazy: the kernel takes the pages only under memory
  // pressure and RSS stays as it was, which is cheaper if the range is reused soon but
  // invisible to anyone watching RSS. Fall back to DONTNEED where FREE is unknown.
  if (lazy) {
    int e = err(sys(SYS_madvise, long(p), long(size), MADV_FREE));
    if (e != EINVAL) return e;
  }
  return err(sys(SYS_madvise, long(p), long(size), MADV_DONTNEED));
}

int huge_pages(void* p, size_t size, bool want) {
  // With THP "always" (or "madvise" and MADV_HUGEPAGE), a 64 KiB page touched in an
  // arena can fault in a whole 2 MiB huge page, and a purge of part of it splits it
  // (seed 002: partly used huge pages stay resident). Arenas opt out unless the thp
  // option asks for them; EINVAL means THP is not built in.
  return err(sys(SYS_madvise, long(p), long(size), want ? MADV_HUGEPAGE : MADV_NOHUGEPAGE));
}

int resident_pages(void* p, size_t size, unsigned char* vec, size_t* out) {
  // mincore's bit 0 per page: present in memory (for anonymous memory, faulted in and
  // not purged; pages handed to MADV_FREE count until the kernel takes them).
  if (int e = err(sys(SYS_mincore, long(p), long(size), long(vec)))) return e;
  size_t n = 0;
  for (size_t i = 0; i < size / kPageSize; i++) n += vec[i] & 1;
  *out = n;
  return 0;
}

int collapse_huge(void* p, size_t size) {
  // MADV_COLLAPSE (Linux 6.1) copies the range into a huge page now, whatever THP's
  // sysfs mode, but not in a VMA marked MADV_NOHUGEPAGE: the range opts in for the
  // call and out again after it. Opting out does not split a huge page already made,
  // and keeps the page fault handler and khugepaged from making others there (a
  // range purged later and touched again gets small pages). Pages that were not
  // present are zero-filled into the huge page: the caller decides how many may be.
  constexpr int kMadvCollapse = 25;
  if (int e = err(sys(SYS_madvise, long(p), long(size), MADV_HUGEPAGE))) return e;
  int e = err(sys(SYS_madvise, long(p), long(size), kMadvCollapse));
  sys(SYS_madvise, long(p), long(size), MADV_NOHUGEPAGE);
  return e;
}

int remap(void* p, size_t old_size, size_t new_size, void** out) {
  long r = sys(SYS_mremap, long(p), long(old_size), long(new_size), MREMAP_MAYMOVE, 0);
  if (int e = err(r)) return e;
  *out = reinterpret_cast<void*>(r);
  return 0;
}

int futex_wait(std::atomic<uint32_t>* word, uint32_t expected, int64_t timeout_ms) {
  struct timespec ts;
  struct timespec* tp = nullptr;
  if (timeout_ms >= 0) {
    ts.tv_sec = timeout_ms / 1000;
    ts.tv_nsec = (timeout_ms % 1000) * 1000000;
    tp = &ts;
  }
  return err(sys(SYS_futex, long(word), FUTEX_WAIT_PRIVATE, long(expected), long(tp)));
}

void futex_wake(std::atomic<uint32_t>* word, int count) {
  sys(SYS_futex, long(word), FUTEX_WAKE_PRIVATE, count);
}

int fence_register() {
  long q = sys(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
  if (q < 0) return err(q);
  if (!(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return ENOSYS;
  return err(sys(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0));
}

int fence_all_threads() {
  // An IPI to each CPU running a thread of this process: cheap next to the fences it
  // saves on the owner's side (see heap.cpp, the cache protocol).
  return err(sys(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0));
}

uint64_t now_ms() {
  // clock_gettime goes through the vDSO and, for CLOCK_MONOTONIC, cannot fail, so it
  // never writes errno; safe on the scavenger thread too.
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}

void yield() { sys(SYS_sched_yield); }

void sleep_ms(unsigned ms) {
  struct timespec ts = {time_t(ms / 1000), long(ms % 1000) * 1000000};
  sys(SYS_nanosleep, long(&ts), 0);
}

void write_stderr(const char* s, size_t n) {
  while (n > 0) {
    long r = sys(SYS_write, 2, long(s), long(n));
    if (r == -EINTR) continue;
    if (r <= 0) return;
    s += r;
    n -= size_t(r);
  }
}

void die() {
  // Raise SIGABRT on this thread only; if it is blocked or handled, exit the process.
  long tid = sys(SYS_gettid);
  sys(SYS_tgkill, sys(SYS_getpid), tid, SIGABRT);
  sys(SYS_exit_group, 127);
  __builtin_unreachable();
}

// ---- the scavenger's thread -------------------------------------------------------
//
// A thread of pthread_create, so that it is one of the C library's threads: setuid
// and the other credential calls reach it (glibc signals every thread it knows to
// change its ids), and it inherits the creator's seccomp filters like any thread.
// pthread_create allocates (the thread's DTV) and takes glibc's stack-list lock, so it
// must only be called where neither can deadlock; scavenger.cpp says where that is.
// All signals are blocked in the thread from its first instruction (but glibc's two
// internal ones, which pthread_create keeps: the setxid broadcast is one): it must
// never run one of the program's handlers.

namespace {

constexpr size_t kStackSize = 256 * 1024;

struct ThreadStart {
  void (*fn)(void*);
  void* arg;
  char name[16];
  std::atomic<long> tid;
};
ThreadStart g_start;  // one such thread at a time (scavenger.cpp)

void* thread_entry(void* p) {
  auto* st = static_cast<ThreadStart*>(p);
  st->tid.store(sys(SYS_gettid), std::memory_order_release);
  sys(SYS_prctl, PR_SET_NAME, long(st->name));
  st->fn(st->arg);
  return nullptr;
}

}  // namespace

int start_thread(void (*fn)(void*), void* arg, const char* name, Thread* out) {
  g_start.fn = fn;
  g_start.arg = arg;
  g_start.tid.store(0, std::memory_order_relaxed);
  size_t i = 0;
  for (; name[i] && i < sizeof g_start.name - 1; i++) g_start.name[i] = name[i];
  g_start.name[i] = 0;
  pthread_attr_t attr;
  if (int e = pthread_attr_init(&attr)) return e;
  sigset_t all;
  sigfillset(&all);
  int e = pthread_attr_setstacksize(&attr, kStackSize);
  if (!e) e = pthread_attr_setsigmask_np(&attr, &all);
  pthread_t t;
  if (!e) e = pthread_create(&t, &attr, thread_entry, &g_start);
  pthread_attr_destroy(&attr);
  if (!e) out->handle = t;
  return e;
}

void join_thread(Thread t) {
  pthread_join(t.handle, nullptr);
  // pthread_join returns when the kernel cleared the thread's tid word, a moment before
  // it leaves the thread group; the kernel counts it until then (unshare would still
  // see two threads). Wait until the tid is gone.
  long tid = g_start.tid.load(std::memory_order_acquire);
  long pid = sys(SYS_getpid);
  while (tid > 0 && sys(SYS_tgkill, pid, tid, 0) == 0) yield();
}

int unshare(int flags) { return err(sys(SYS_unshare, flags)); }
int setns(int fd, int nstype) { return err(sys(SYS_setns, fd, nstype)); }

}  // namespace scav::os

namespace scav {
[[noreturn]] void assert_fail(const char* expr, const char* file, int line) {
  char buf[512];
  size_t n = 0;
  auto put = [&](const char* s) {
    while (*s && n < sizeof buf - 2) buf[n++] = *s++;
  };
  char num[16];
  int k = 0;
  do { num[k++] = char('0' + line % 10); line /= 10; } while (line && k < 15);
  put("scav: assertion failed: ");
  put(expr);
  put(" at ");
  put(file);
  put(":");
  while (k > 0 && n < sizeof buf - 2) buf[n++] = num[--k];
  buf[n++] = '\n';
  os::write_stderr(buf, n);
  os::die();
}
}  // namespace scav
