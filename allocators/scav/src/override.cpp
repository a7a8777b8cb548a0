// override.cpp - the exported C ABI (the malloc family), C++ operator new/delete, and
// the scav_* API. Stateless glue over alloc.h, heap, huge and scavenger; any thread.
//
// operator new on failure: it loops over std::get_new_handler() like the standard
// says, and when there is no handler it calls std::__throw_bad_alloc(). Both are weak
// references to libstdc++, so this library does not depend on it: in a C++ program
// they resolve to the program's libstdc++ and new throws std::bad_alloc as usual; if
// they are absent (no libstdc++ in the process) new aborts with a message. The nothrow
// forms return null when there is no handler or when the handler throws.
#include <malloc.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "../include/scav.h"
#include "alloc.h"
#include "heap.h"
#include "huge.h"
#include "init.h"
#include "new_handler.h"
#include "os.h"
#include "scavenger.h"
#include "secure.h"
#include "stats.h"

// Every exported function starts on a 64-byte boundary: the fast paths of alloc.h are
// inlined into them, and where their first instruction falls in a fetch block moved a
// 128 KiB malloc/free pair by 20% with no change to its code (allocators/scav/README.md,
// "Speed"). Aligned, the figure no longer depends on what the linker placed before it.
#define SCAV_ALIGN_ENTRY aligned(64)
#define SCAV_API extern "C" __attribute__((visibility("default"), SCAV_ALIGN_ENTRY))
#ifdef SCAV_PREFIXED
#define SCAV_NAME(f) scav_##f
#else
#define SCAV_NAME(f) f
#endif

using std::size_t;

extern "C" {
[[noreturn]] void _ZSt17__throw_bad_allocv() __attribute__((weak));
typedef void (*scav_new_handler_t)();
scav_new_handler_t _ZSt15get_new_handlerv() __attribute__((weak));
}

namespace scav {
namespace {

inline bool is_pow2(size_t a) { return a && !(a & (a - 1)); }

void* alloc_aligned(size_t align, size_t n) {
  if (align <= kMinAlign) return alloc_fast(n);
  if (n > (size_t(1) << 62) || align > (size_t(1) << 40)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (align <= kSliceSize) {
    // Pages start on 64 KiB slice boundaries (pages of 64, 128 or 256 KiB, 1 MiB or 4
    // MiB, each aligned to its size), so a class whose block size is a multiple of
    // `align` hands out aligned blocks without padding.
    size_t m = (n + align - 1) & ~(align - 1);
    if (m == 0) m = align;
    if (m <= kLargeMax && class_size(class_of(m)) % align == 0) return alloc_fast(m);
    size_t padded = n + align - kMinAlign;
    if (padded <= kLargeMax) {
      void* p = alloc_fast(padded);
      if (!p) return nullptr;
      uintptr_t u = reinterpret_cast<uintptr_t>(p);
      uintptr_t q = (u + align - 1) & ~(uintptr_t(align) - 1);
      if (q != u) heap_mark_aligned(arena_page_of(arena_of(p), p));
      return reinterpret_cast<void*>(q);
    }
  }
  void* p = huge_alloc(n, align, nullptr);
  if (!p) errno = ENOMEM;
  scavenger_poll();
  return p;
}

void* calloc_impl(size_t count, size_t size) {
  size_t n;
  if (__builtin_mul_overflow(count, size, &n)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (n > kLargeMax) {
    bool zeroed = false;
    void* p = huge_alloc(n, 0, &zeroed);
    if (!p) {
      errno = ENOMEM;
      return nullptr;
    }
    if (!zeroed) memset(p, 0, n);
    scavenger_poll();
    return p;
  }
  void* p = alloc_fast(n);
  if (p) memset(p, 0, n);
  return p;
}

void* realloc_impl(void* p, size_t n) {
  if (!p) return alloc_fast(n);
  if (n == 0) {  // glibc frees and returns null; programs rely on either, keep glibc's
    free_fast(p);
    return nullptr;
  }
  size_t have;
  if (unit_slices_of(p)) {
    have = usable_size(p);
    if (n <= have && n >= have / 2) return p;
  } else {
    have = huge_usable(p);
    if (n > kLargeMax) {
      void* q = huge_realloc(p, n);
      if (!q) errno = ENOMEM;
      return q;
    }
  }
  // A block that grows is likely to grow again: move it to at least a quarter more
  // than it had, so that a string grown a few bytes at a time is copied a few times
  // per doubling, not once per class (8 per doubling).
  size_t want = n;
  if (n > have && n <= kLargeMax && n - have < have / 4) {
    want = have + have / 4;
    if (want > kLargeMax) want = kLargeMax;
  }
  void* q = alloc_fast(want);
  if (!q && want != n) q = alloc_fast(n);
  if (!q) return nullptr;
  memcpy(q, p, n < have ? n : have);
  free_fast(p);
  return q;
}

// The common realloc: a block of an arena page (not handed out at an interior offset)
// that still fits. Kept apart so that it returns without the frame of the moving path.
__attribute__((always_inline)) inline bool realloc_fits(void* p, size_t n) {
  uintptr_t* unit = unit_slices_of(p);
  if (SCAV_UNLIKELY(unit == nullptr)) return false;
  Page* pg = slice_ref_page(unit_ref_of(unit, p));
  if (pg->owner_tag.load(std::memory_order_relaxed) & kTagAligned) return false;
  size_t have = pg->bsize;
  return n <= have && n >= have / 2;
}

void* new_failed(size_t n, size_t align, bool nothrow) {
  for (;;) {
    scav_new_handler_t h = _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv() : nullptr;
    if (!h) {
      if (nothrow) return nullptr;
      if (_ZSt17__throw_bad_allocv) _ZSt17__throw_bad_allocv();
      static const char msg[] = "scav: operator new: out of memory\n";
      os::write_stderr(msg, sizeof msg - 1);
      os::die();
    }
    if (!nothrow) h();
    else if (!call_new_handler_nothrow(h)) return nullptr;
    void* p = align ? alloc_aligned(align, n) : alloc_fast(n);
    if (p) return p;
  }
}

inline void* new_impl(size_t n) {
  void* p = alloc_fast(n);
  if (SCAV_LIKELY(p != nullptr)) return p;
  return new_failed(n, 0, false);
}

inline void* new_aligned_impl(size_t n, size_t align, bool nothrow) {
  void* p = alloc_aligned(align, n);
  if (SCAV_LIKELY(p != nullptr)) return p;
  return new_failed(n, align, nothrow);
}

}  // namespace
}  // namespace scav

using namespace scav;

// ---- C ----------------------------------------------------------------------------
//
// With SCAV_PREFIXED (the sanitizer builds: see CMakeLists.txt) these are scav_malloc,
// scav_free, ... and nothing below them is defined: a sanitizer's own malloc serves
// the program, and the tests drive scav, instrumented, through the prefixed names.

SCAV_API void* SCAV_NAME(malloc)(size_t n) noexcept { return alloc_fast(n); }
SCAV_API void SCAV_NAME(free)(void* p) noexcept { free_fast(p); }
SCAV_API void SCAV_NAME(cfree)(void* p) noexcept { free_fast(p); }
SCAV_API void* SCAV_NAME(calloc)(size_t c, size_t n) noexcept { return calloc_impl(c, n); }
SCAV_API void* SCAV_NAME(realloc)(void* p, size_t n) noexcept {
  if (SCAV_UNLIKELY(secure_on()) && p) secure_check_live(p);
  if (p && n && realloc_fits(p, n)) return p;
  return realloc_impl(p, n);
}

SCAV_API void* SCAV_NAME(reallocarray)(void* p, size_t c, size_t n) noexcept {
  size_t t;
  if (__builtin_mul_overflow(c, n, &t)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (SCAV_UNLIKELY(secure_on()) && p) secure_check_live(p);
  return realloc_impl(p, t);
}

SCAV_API int SCAV_NAME(posix_memalign)(void** out, size_t align, size_t n) noexcept {
  if (!is_pow2(align) || align % sizeof(void*) != 0) return EINVAL;
  int saved = errno;
  void* p = alloc_aligned(align, n);
  errno = saved;
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

SCAV_API void* SCAV_NAME(aligned_alloc)(size_t align, size_t n) noexcept {
  if (!is_pow2(align)) {
    errno = EINVAL;
    return nullptr;
  }
  return alloc_aligned(align, n);
}

SCAV_API void* SCAV_NAME(memalign)(size_t align, size_t n) noexcept {
  if (align <= kMinAlign) return alloc_fast(n);
  if (!is_pow2(align)) {  // glibc rounds the alignment up to a power of two
    if (align > (size_t(1) << 62)) {
      errno = EINVAL;
      return nullptr;
    }
    size_t a = 1;
    while (a < align) a <<= 1;
    align = a;
  }
  return alloc_aligned(align, n);
}

SCAV_API void* SCAV_NAME(valloc)(size_t n) noexcept { return alloc_aligned(os::kPageSize, n); }

SCAV_API void* SCAV_NAME(pvalloc)(size_t n) noexcept {
  size_t r = (n + os::kPageSize - 1) & ~(os::kPageSize - 1);
  if (r < n) {
    errno = ENOMEM;
    return nullptr;
  }
  return alloc_aligned(os::kPageSize, r ? r : os::kPageSize);
}

SCAV_API size_t SCAV_NAME(malloc_usable_size)(void* p) noexcept { return usable_size(p); }

#ifndef SCAV_PREFIXED
// ---- glibc's malloc surface ---------------------------------------------------------
//
// What programs call beside the malloc family: the __libc_ names (glibc's internal
// entry points, which some programs and libraries call to reach "the real malloc"),
// and the statistics and tuning calls, answered from scav's own figures.

SCAV_API void* __libc_malloc(size_t n) noexcept { return malloc(n); }
SCAV_API void __libc_free(void* p) noexcept { free_fast(p); }
SCAV_API void __libc_cfree(void* p) noexcept { free_fast(p); }
SCAV_API void* __libc_calloc(size_t c, size_t n) noexcept { return calloc(c, n); }
SCAV_API void* __libc_realloc(void* p, size_t n) noexcept { return realloc(p, n); }
SCAV_API void* __libc_memalign(size_t align, size_t n) noexcept { return memalign(align, n); }
SCAV_API void* __libc_valloc(size_t n) noexcept { return valloc(n); }
SCAV_API void* __libc_pvalloc(size_t n) noexcept { return pvalloc(n); }
SCAV_API int __posix_memalign(void** out, size_t align, size_t n) noexcept {
  return posix_memalign(out, align, n);
}

SCAV_API struct mallinfo2 mallinfo2(void) noexcept {
  // glibc's fields, in scav's terms: arena slices that may be resident, the bytes of
  // pages heaps own (an upper bound of small blocks in use) and the rest of those
  // slices, live direct mappings, and what a trim would give back now. Free chunk
  // counts have no meaning here and stay 0.
  StatsView v = stats_view();
  struct mallinfo2 m = {};
  m.arena = v.arena_committed;
  m.uordblks = v.page_bytes;
  m.fordblks = v.arena_committed > v.page_bytes ? v.arena_committed - v.page_bytes : 0;
  m.hblks = v.huge_blocks;
  m.hblkhd = v.huge_bytes;
  m.keepcost = v.purge_pending + v.huge_cached;
  return m;
}

SCAV_API struct mallinfo mallinfo(void) noexcept {
  // The int fields wrap as glibc's do; mallinfo2 has the full values.
  struct mallinfo2 m2 = mallinfo2();
  struct mallinfo m = {};
  m.arena = int(m2.arena);
  m.uordblks = int(m2.uordblks);
  m.fordblks = int(m2.fordblks);
  m.hblks = int(m2.hblks);
  m.hblkhd = int(m2.hblkhd);
  m.keepcost = int(m2.keepcost);
  return m;
}

// Returns 1 if memory went back to the OS, as glibc's does.
SCAV_API int malloc_trim(size_t) noexcept {
  uint64_t before = stats_view().purged;
  scav_collect(true);
  return stats_view().purged > before ? 1 : 0;
}

// glibc's parameters are accepted (1) and have no effect: scav is tuned by its SCAV_*
// options. Anything else is an error (0), as in glibc.
SCAV_API int mallopt(int param, int) noexcept {
  return param == M_MXFAST || (param <= M_TRIM_THRESHOLD && param >= M_ARENA_MAX) ? 1 : 0;
}

SCAV_API void malloc_stats(void) noexcept {
  char buf[2048];
  size_t n = stats_json(buf, sizeof buf);
  if (n >= sizeof buf) n = sizeof buf - 1;
  static const char head[] = "scav 0.1.0: ";
  os::write_stderr(head, sizeof head - 1);
  buf[n] = '\n';
  os::write_stderr(buf, n + 1);
}

SCAV_API int malloc_info(int options, FILE* fp) noexcept {
  if (options != 0) {
    errno = EINVAL;
    return -1;
  }
  char buf[2048];
  stats_json(buf, sizeof buf);
  fputs("<malloc version=\"scav-0.1.0\">\n<stats format=\"json\">", fp);
  fputs(buf, fp);
  fputs("</stats>\n</malloc>\n", fp);
  return 0;
}

#endif  // SCAV_PREFIXED

// ---- scav API ---------------------------------------------------------------------

SCAV_API const char* scav_version(void) { return "0.1.0"; }

SCAV_API void scav_collect(bool force) {
  process_init();
  if (force) {
    // Empty pages of this thread, then a forced pass: it takes every heap's cached
    // pages, takes idle and abandoned heaps, empties the huge cache and purges every
    // free arena range; it waits for a pass that is under way.
    heap_collect_current_thread();
    purge_pass(true, true);
  } else {
    purge_pass(false, false);
  }
}

SCAV_API size_t scav_stats_json(char* buf, size_t len) { return stats_json(buf, len); }
SCAV_API void scav_thread_idle_start(void) { heap_idle_start(); }
SCAV_API void scav_thread_idle_end(void) { heap_idle_end(); }

#ifndef SCAV_PREFIXED
// ---- namespaces ------------------------------------------------------------------
//
// The kernel refuses unshare(CLONE_NEWUSER), and setns into a user namespace, to a
// process with more than one thread: the scavenger must not be in the way of a program
// that has one. It stops for the call and starts again after it if it ran.

SCAV_API int unshare(int flags) noexcept {
  bool ran = scavenger_stop();
  int e = os::unshare(flags);
  if (ran) scavenger_ensure_started();
  if (e) errno = e;
  return e ? -1 : 0;
}

SCAV_API int setns(int fd, int nstype) noexcept {
  bool ran = scavenger_stop();
  int e = os::setns(fd, nstype);
  if (ran) scavenger_ensure_started();
  if (e) errno = e;
  return e ? -1 : 0;
}

// ---- C++ --------------------------------------------------------------------------

#define SCAV_CXX __attribute__((visibility("default"), SCAV_ALIGN_ENTRY))

SCAV_CXX void* operator new(size_t n) { return new_impl(n); }
SCAV_CXX void* operator new[](size_t n) { return new_impl(n); }
SCAV_CXX void* operator new(size_t n, const std::nothrow_t&) noexcept {
  void* p = alloc_fast(n);
  return p ? p : new_failed(n, 0, true);
}
SCAV_CXX void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  void* p = alloc_fast(n);
  return p ? p : new_failed(n, 0, true);
}
SCAV_CXX void* operator new(size_t n, std::align_val_t a) {
  return new_aligned_impl(n, size_t(a), false);
}
SCAV_CXX void* operator new[](size_t n, std::align_val_t a) {
  return new_aligned_impl(n, size_t(a), false);
}
SCAV_CXX void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return new_aligned_impl(n, size_t(a), true);
}
SCAV_CXX void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return new_aligned_impl(n, size_t(a), true);
}

SCAV_CXX void operator delete(void* p) noexcept { free_fast(p); }
SCAV_CXX void operator delete[](void* p) noexcept { free_fast(p); }
SCAV_CXX void operator delete(void* p, size_t) noexcept { free_fast(p); }
SCAV_CXX void operator delete[](void* p, size_t) noexcept { free_fast(p); }
SCAV_CXX void operator delete(void* p, const std::nothrow_t&) noexcept { free_fast(p); }
SCAV_CXX void operator delete[](void* p, const std::nothrow_t&) noexcept { free_fast(p); }
SCAV_CXX void operator delete(void* p, std::align_val_t) noexcept { free_fast(p); }
SCAV_CXX void operator delete[](void* p, std::align_val_t) noexcept { free_fast(p); }
SCAV_CXX void operator delete(void* p, size_t, std::align_val_t) noexcept { free_fast(p); }
SCAV_CXX void operator delete[](void* p, size_t, std::align_val_t) noexcept { free_fast(p); }
SCAV_CXX void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  free_fast(p);
}
SCAV_CXX void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  free_fast(p);
}

#endif  // SCAV_PREFIXED
