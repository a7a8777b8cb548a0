// api.h - the malloc family as the torture test and the fuzzer call it: the standard
// names (scav_static replaces them) or, in the sanitizer builds (SCAV_PREFIXED), the
// scav_ names of scav_prefixed, while the sanitizer's malloc serves everything else.
// Test-only; any thread.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <malloc.h>

#include "scav.h"

namespace api {

#ifdef SCAV_PREFIXED
inline void* malloc(size_t n) { return scav_malloc(n); }
inline void free(void* p) { scav_free(p); }
inline void* calloc(size_t c, size_t n) { return scav_calloc(c, n); }
inline void* realloc(void* p, size_t n) { return scav_realloc(p, n); }
inline int posix_memalign(void** out, size_t a, size_t n) { return scav_posix_memalign(out, a, n); }
inline void* aligned_alloc(size_t a, size_t n) { return scav_aligned_alloc(a, n); }
inline size_t usable_size(void* p) { return scav_malloc_usable_size(p); }
#else
inline void* malloc(size_t n) { return ::malloc(n); }
inline void free(void* p) { ::free(p); }
inline void* calloc(size_t c, size_t n) { return ::calloc(c, n); }
inline void* realloc(void* p, size_t n) { return ::realloc(p, n); }
inline int posix_memalign(void** out, size_t a, size_t n) { return ::posix_memalign(out, a, n); }
inline void* aligned_alloc(size_t a, size_t n) { return ::aligned_alloc(a, n); }
inline size_t usable_size(void* p) { return ::malloc_usable_size(p); }
#endif

}  // namespace api
