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

// Where alloc.h's fast path sends an allocation it cannot serve: heap_alloc_slow, or
// with SCAV_SECURE=1 (where every allocation comes here) the same fast path on the
// thread's own heap, and the block recorded.
void* alloc_slow_entry(size_t n);

// p is about to be freed: abort unless it is a handed-out block (or null).
void secure_check_free(void* p);
// p is about to be reallocated or measured: abort unless it is a live block.
void secure_check_live(void* p);

}  // namespace scav
