// secure.cpp - SCAV_SECURE=1: one bit per block of each page, set when the block is
// handed out and cleared (by an atomic and) when it is freed, so a free that finds it
// clear is a double free, on whichever thread. The bits live in the arena's meta area
// (512 bytes per slice: a 64 KiB page of 16-byte blocks has 4096), indexed by the
// page's first slice; they are all clear when a page goes back to its arena. Pointers
// outside every arena are huge blocks, checked by their header.
#include "secure.h"

#include <atomic>

#include "alloc.h"
#include "arena.h"
#include "huge.h"
#include "os.h"

namespace scav {
namespace {

struct BlockBit {
  std::atomic<uint64_t>* word;
  uint64_t mask;
};

// The bit of the block at p, or null word when p is not the start of a carved block
// (aligned pages: anywhere inside one). Aborts on a pointer no page covers.
BlockBit block_bit(void* p, uintptr_t* unit, const char* what) {
  SliceRef ref = unit_ref_of(unit, p);
  if (ref == 0) pointer_fail("invalid pointer (not in a page)", p);
  Page* pg = slice_ref_page(ref);
  if (pg == &g_released_page) pointer_fail("double free (or invalid pointer) of", p);
  uintptr_t off = reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(pg->start);
  if (off >= size_t(pg->carved) * pg->bsize) pointer_fail(what, p);
  bool aligned = pg->owner_tag.load(std::memory_order_relaxed) & kTagAligned;
  if (!aligned && off % pg->bsize != 0) pointer_fail("invalid pointer (inside a block)", p);
  uint32_t i = uint32_t(off / pg->bsize);
  uint64_t* bits = pg->arena->secure_bits + size_t(pg->first_slice) * kSecureWordsPerSlice;
  return {reinterpret_cast<std::atomic<uint64_t>*>(bits + i / 64), uint64_t(1) << (i % 64)};
}

}  // namespace

// Records the block just handed out at p (null: none; a huge block: nothing, its
// header says) and returns p.
static void* secure_noted(void* p) {
  uintptr_t* unit = p ? unit_slices_of(p) : nullptr;
  if (!unit) return p;
  BlockBit b = block_bit(p, unit, "heap corrupted: handed out a block past the carved ones");
  if (b.word->fetch_or(b.mask, std::memory_order_relaxed) & b.mask)
    pointer_fail("heap corrupted: handed out a block twice:", p);
  return p;
}

void secure_check_free(void* p) {
  if (!p) return;
  uintptr_t* unit = unit_slices_of(p);
  if (!unit) {
    huge_check(p);
    return;
  }
  BlockBit b = block_bit(p, unit, "invalid pointer (never handed out)");
  if (!(b.word->fetch_and(~b.mask, std::memory_order_relaxed) & b.mask))
    pointer_fail("double free or free of a block never handed out:", p);
}

void secure_check_live(void* p) {
  uintptr_t* unit = unit_slices_of(p);
  if (!unit) {
    huge_check(p);
    return;
  }
  BlockBit b = block_bit(p, unit, "invalid pointer (never handed out)");
  if (!(b.word->load(std::memory_order_relaxed) & b.mask))
    pointer_fail("use of a freed block (realloc or malloc_usable_size after free):", p);
}

void pointer_fail(const char* what, const void* p) {
  char buf[160];
  size_t n = 0;
  auto put = [&](const char* s) {
    while (*s && n < sizeof buf - 24) buf[n++] = *s++;
  };
  put("scav: ");
  put(what);
  put(" 0x");
  uintptr_t v = reinterpret_cast<uintptr_t>(p);
  char hex[16];
  int k = 0;
  do { hex[k++] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v);
  while (k) buf[n++] = hex[--k];
  buf[n++] = '\n';
  os::write_stderr(buf, n);
  os::die();
}

void* alloc_slow_entry(size_t n) {
  // The first allocation of a thread sets up its heap (and the first of the process
  // reads the options): only after it may the option be read.
  if (SCAV_UNLIKELY(tls_heap == &g_empty_heap)) {
    void* p = heap_alloc_slow(n);
    return secure_on() ? secure_noted(p) : p;
  }
  if (SCAV_LIKELY(!secure_on())) return heap_alloc_slow(n);
  return secure_noted(alloc_from<heap_alloc_slow>(tls_heap, n));
}

}  // namespace scav
