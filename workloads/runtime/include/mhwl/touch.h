// Making allocations real: the compiler may delete a malloc/free pair or a
// memset whose result nobody reads. These helpers write every page of a block
// and hide a pointer from the optimiser. Stateless; any thread.
#pragma once

#include <cstddef>

namespace mhwl {

// The compiler must assume p is read and memory may have changed.
inline void escape(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

// Writes one byte in every 4 KiB of [p, p + size) and the last byte, so that
// every page of the block is resident.
inline void touch_pages(void* p, size_t size, unsigned char value = 1) {
  auto* c = static_cast<volatile unsigned char*>(p);
  for (size_t off = 0; off < size; off += 4096) c[off] = value;
  if (size) c[size - 1] = value;
  escape(p);
}

}  // namespace mhwl
