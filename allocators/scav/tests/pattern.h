// pattern.h - a block's content as the torture test and the fuzzer write and check it:
// bytes derived from a seed, all of a small block, the ends and one byte per OS page
// of a large one. Test-only; stateless.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scav_test {

template <class F>
void pattern_positions(size_t n, F f) {
  if (n <= 4096) {
    for (size_t i = 0; i < n; i++) f(i);
    return;
  }
  for (size_t i = 0; i < 256; i++) f(i);
  for (size_t i = 4096; i < n - 256; i += 4096) f(i);
  for (size_t i = n - 256; i < n; i++) f(i);
}

inline unsigned char pattern(uint32_t seed, size_t i) {
  return (unsigned char)(seed + i * 131 + (i >> 8));
}

inline void pattern_fill(unsigned char* p, size_t n, uint32_t seed) {
  pattern_positions(n, [&](size_t i) { p[i] = pattern(seed, i); });
}

// Whether the pattern of a block of n bytes is intact in its first `upto` bytes.
inline bool pattern_intact(const unsigned char* p, size_t n, uint32_t seed, size_t upto) {
  bool ok = true;
  pattern_positions(n, [&](size_t i) {
    if (i < upto && p[i] != pattern(seed, i)) ok = false;
  });
  return ok;
}

}  // namespace scav_test
