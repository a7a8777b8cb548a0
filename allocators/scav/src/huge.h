// huge.h - blocks above 512 KiB: one direct mapping each, with a small cache of
// recently freed mappings. The cache is shared by all threads under its lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace scav {

// align: 0 or a power of two. *zeroed (if given) tells whether the block is known zero.
void* huge_alloc(size_t size, size_t align, bool* zeroed);
void huge_free(void* p);
size_t huge_usable(const void* p);
// Abort unless p is a live huge block (SCAV_SECURE=1; p must be readable below).
void huge_check(const void* p);
// Resize in place or move with mremap; size > 512 KiB. Null on ENOMEM (p unchanged).
void* huge_realloc(void* p, size_t size);

// Purge-pass part: unmap cached mappings that are due (all when force).
uint64_t huge_purge(bool force, uint64_t now);
uint64_t huge_earliest_expire();

void huge_lock();
void huge_unlock();
void huge_reset_lock();

}  // namespace scav
