// os.cpp - the allocator's only door to the kernel: mmap, munmap, madvise, mremap,
// futex, clone, rt_sigprocmask, prctl, write. Stateless; callable from any thread.
//
// Contract, for every function: addresses and sizes are page-aligned; the result is 0
// or a positive errno. The calls are raw `syscall` instructions, not libc wrappers, for
// two reasons: a libc wrapper writes errno, and our scavenger thread is started with
// clone(2) and has no libc thread descriptor (its %fs points at a private dummy block);
// and nothing here may allocate or lock, since it runs inside malloc.
#include "os.h"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
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

void* mmap_raw(void* hint, size_t size, int prot, int flags) {
  long r = sys(SYS_mmap, long(hint), long(size), prot, flags, -1, 0);
  if (r < 0 && r > -4096) return nullptr;
  return reinterpret_cast<void*>(r);
}

}  // namespace

int map_fresh(size_t size, void** out) {
  // MAP_NORESERVE: an arena reserves far more than it touches; commit is per touched
  // page and "committed" in our bitmaps means "may be resident".
  void* p = mmap_raw(nullptr, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

int reserve(size_t size, size_t align, void** out) {
  if (align <= kPageSize) return map_fresh(size, out);
  if (size + align < size) return ENOMEM;
  void* raw;
  if (int e = map_fresh(size + align, &raw)) return e;
  uintptr_t b = reinterpret_cast<uintptr_t>(raw);
  uintptr_t a = (b + align - 1) & ~(uintptr_t(align) - 1);
  // Trim both ends so the mapping is exactly [a, a+size): the kernel keeps one VMA.
  if (a > b) sys(SYS_munmap, long(b), long(a - b));
  uintptr_t end = b + size + align;
  if (end > a + size) sys(SYS_munmap, long(a + size), long(end - (a + size)));
  *out = reinterpret_cast<void*>(a);
  return 0;
}

int unmap(void* p, size_t size) { return err(sys(SYS_munmap, long(p), long(size))); }

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

int no_huge_pages(void* p, size_t size) {
  // With THP "always", a 64 KiB page touched in an arena could fault in a whole 2 MiB
  // huge page, and a purge of part of it splits it (seed 002: partly used huge pages
  // stay resident). Arenas opt out; EINVAL means THP is not built in.
  return err(sys(SYS_madvise, long(p), long(size), MADV_NOHUGEPAGE));
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
// pthread_create would allocate (its TLS block and DTV come from malloc) and take the
// loader's locks, from inside a free() that may itself run under those locks (dlopen
// frees under dl_load_lock). A clone(2) thread needs neither: we map its stack and a
// private dummy TLS area ourselves. It must then never call into libc code that uses
// thread state; everything it runs is this library plus raw system calls (and the
// vDSO clock), and a stray errno write would land harmlessly in the dummy block.
// It is invisible to glibc, so __libc_single_threaded stays true and fork() copies
// only the calling thread, as with any thread.

namespace {

constexpr size_t kStackSize = 256 * 1024;
constexpr size_t kTlsBelow = 64 * 1024;  // static TLS lies below the TCB on x86-64
constexpr size_t kTcbSize = 4096;

struct ThreadStart {
  void (*fn)(void*);
  void* arg;
  char name[16];
};

extern "C" long scav_clone_raw(unsigned long flags, void* stack, void (*fn)(void*),
                               void* arg, void* tls);

asm(R"(
  .text
  .p2align 4
  .type scav_clone_raw,@function
  .hidden scav_clone_raw
scav_clone_raw:
  /* rdi=flags rsi=stack top rdx=fn rcx=arg r8=tls; the child pops fn and arg */
  subq $16, %rsi
  movq %rcx, 8(%rsi)
  movq %rdx, 0(%rsi)
  xorl %edx, %edx
  xorl %r10d, %r10d
  movl $56, %eax
  syscall
  testq %rax, %rax
  jnz 1f
  xorl %ebp, %ebp
  popq %rax
  popq %rdi
  callq *%rax
  xorl %edi, %edi
  movl $60, %eax
  syscall
  hlt
1:
  ret
  .size scav_clone_raw, .-scav_clone_raw
)");

void thread_entry(void* p) {
  auto* st = static_cast<ThreadStart*>(p);
  sys(SYS_prctl, PR_SET_NAME, long(st->name));
  st->fn(st->arg);
}

}  // namespace

int start_thread(void (*fn)(void*), void* arg, const char* name) {
  void* mem;
  size_t total = kStackSize + kTlsBelow + kTcbSize;
  if (int e = map_fresh(total, &mem)) return e;
  auto* base = static_cast<char*>(mem);
  // Layout: [stack | dummy static TLS | TCB]. The TCB's first and third words point
  // at itself, as glibc's tcbhead_t expects (tcb, self).
  auto* tcb = reinterpret_cast<uintptr_t*>(base + kStackSize + kTlsBelow);
  tcb[0] = reinterpret_cast<uintptr_t>(tcb);
  tcb[2] = reinterpret_cast<uintptr_t>(tcb);
  auto* st = reinterpret_cast<ThreadStart*>(base + kStackSize + kTlsBelow + 64);
  st->fn = fn;
  st->arg = arg;
  size_t i = 0;
  for (; name[i] && i < sizeof st->name - 1; i++) st->name[i] = name[i];
  st->name[i] = 0;
  void* stack_top = base + kStackSize - 64;  // 16-byte aligned

  // Block every signal around clone so the child starts with all of them blocked: it
  // must never run a program's handler (asynchronous signals go to other threads).
  uint64_t all = ~uint64_t(0), old = 0;
  sys(SYS_rt_sigprocmask, SIG_SETMASK, long(&all), long(&old), 8);
  unsigned long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                        CLONE_SYSVSEM | CLONE_SETTLS;
  long r = scav_clone_raw(flags, stack_top, thread_entry, st, tcb);
  sys(SYS_rt_sigprocmask, SIG_SETMASK, long(&old), 0, 8);
  if (r < 0) {
    unmap(mem, total);
    return int(-r);
  }
  return 0;
}

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
