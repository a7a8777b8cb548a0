// secure.h - pointer checks: the cheap ones every build makes on slow paths (a page's
// lone block freed twice, a free into a page nobody owns), and with SCAV_SECURE=1 a
// bitmap of the handed-out blocks of every page, which catches double, invalid and
// interior frees on every path. The bitmap words are shared by all threads (atomic
// read-modify-write); everything else here is stateless.
#pragma once

#include <cstddef>
#include <cstdint>

#include "options.h"

namespace scav {

// Writes "scav: <what> <p>" to stderr and aborts (like glibc's "free(): double free
// detected"), without allocating.
[[noreturn]] void pointer_fail(const char* what, const void* p);

inline bool secure_on() { return option(Opt::kSecure) != 0; }

// SCAV_SECURE=1 only, what alloc.h's fast paths leave for when the option is on:
// secure_noted records the block just handed out at p (null: none; a huge block:
// nothing, its header says) and returns p; free_secure checks p, then frees it.
void* secure_noted(void* p);
void free_secure(void* p);
// heap_alloc_slow and heap_alloc_overlap (heap.h), whose blocks are recorded when the
// option is on: the fast path's way out, a tail call.
void* alloc_slow_noted(size_t n);
void* alloc_overlap_noted(size_t n, unsigned c, uintptr_t v);

// p is about to be freed: abort unless it is a handed-out block (or null).
void secure_check_free(void* p);
// p is about to be reallocated or measured: abort unless it is a live block.
void secure_check_live(void* p);

}  // namespace scav
