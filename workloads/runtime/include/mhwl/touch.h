// Making allocations real: the compiler may delete a malloc/free pair or a
// memset whose result nobody reads. These helpers write every page of a block
// and hide a pointer from the optimiser, and draw the sizes of a set of blocks.
// Stateless; any thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

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

// Block sizes drawn uniformly from [min_block, max_block] that add up to
// exactly `total` (the last one is cut short).
inline std::vector<size_t> split_into_blocks(std::mt19937_64& rng, size_t total, size_t min_block, size_t max_block) {
  std::vector<size_t> sizes;
  for (size_t sum = 0; sum < total;) {
    size_t s = std::min(min_block + rng() % (max_block - min_block + 1), total - sum);
    sizes.push_back(s);
    sum += s;
  }
  return sizes;
}

}  // namespace mhwl
