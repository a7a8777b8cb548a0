// sizeclass.h - size classes and page geometry; constants only, no state.
//
// Classes: 16..128 in steps of 16, then 8 classes per doubling up to 512 KiB, so a
// request above 128 bytes wastes at most 1/8 of its block (below 128 the 16-byte
// alignment malloc owes its callers is the granule). Blocks up to 1 KiB live in
// 64 KiB pages (one arena slice), up to 2 KiB in 128 KiB pages, up to 8 KiB in 256 KiB
// pages (class_slices), up to 88 KiB in 1 MiB pages, 96-512 KiB in 4 MiB "large"
// pages; anything bigger is a direct mapping.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scav {

constexpr unsigned kSliceShift = 16;
constexpr size_t kSliceSize = size_t(1) << kSliceShift;  // 64 KiB
constexpr size_t kSmallMax = 8 * 1024;
constexpr size_t kLargeMin = 96 * 1024;
constexpr size_t kLargeMax = 512 * 1024;
constexpr unsigned kNumClasses = 8 + 12 * 8;  // 104
constexpr size_t kMinAlign = 16;

constexpr size_t class_size(unsigned c) {
  if (c < 8) return 16 * size_t(c + 1);
  unsigned k = 7 + (c - 8) / 8;
  unsigned j = (c - 8) % 8 + 1;
  return (size_t(1) << k) + j * (size_t(1) << (k - 3));
}

constexpr unsigned class_of_formula(size_t n) {
  if (n <= 128) return n ? unsigned((n - 1) >> 4) : 0;
  size_t s = n - 1;
  unsigned k = 63 - unsigned(__builtin_clzll(s));
  return 8 + (k - 7) * 8 + unsigned((s >> (k - 3)) & 7);
}

// A class table for sizes up to Max in granules of 2^Shift, indexed by n rounded up to
// a granule: entry i is the class of i granules. One load on malloc's fast path, whose
// chain of dependent loads starts with the class. Below 1 KiB the granule is 16 bytes;
// above it every class spans a multiple of 128 bytes, so a table of 4096 entries for
// up to 512 KiB replaces a bit scan and four dependent steps.
template <unsigned Shift, size_t Max>
struct ClassTable {
  uint8_t cls[(Max >> Shift) + 1];
  constexpr ClassTable() : cls{} {
    for (size_t i = 0; i <= (Max >> Shift); i++) cls[i] = uint8_t(class_of_formula(i << Shift));
  }
  constexpr unsigned operator()(size_t n) const { return cls[(n + (size_t(1) << Shift) - 1) >> Shift]; }
};
inline constexpr ClassTable<4, 1024> kSmallClassTable{};
inline constexpr ClassTable<7, kLargeMax> kLargeClassTable{};

// The coarse table is right only where classes span whole granules: every class above
// 1 KiB holds its largest size, and the next size is the next class.
constexpr bool large_class_table_ok() {
  for (unsigned c = class_of_formula(1025); c < kNumClasses; c++) {
    const size_t b = class_size(c);
    if (kLargeClassTable(b) != c) return false;
    if (c + 1 < kNumClasses && kLargeClassTable(b + 1) != c + 1) return false;
  }
  return true;
}
static_assert(large_class_table_ok());

inline unsigned class_of(size_t n) { return n <= 1024 ? kSmallClassTable(n) : kLargeClassTable(n); }

enum PageKind : uint8_t { kPageSmall = 0, kPageMedium = 1, kPageLarge = 2 };

constexpr PageKind class_kind(unsigned c) {
  size_t b = class_size(c);
  return b <= kSmallMax ? kPageSmall : (b < kLargeMin ? kPageMedium : kPageLarge);
}
constexpr unsigned kLargePageSlices = 64;  // 4 MiB

// The slices (64 KiB each) of a page of class c: medium pages are 1 MiB, large ones
// 4 MiB, and the small ones grow with their blocks. Above 1 KiB a 64 KiB page holds
// few blocks (16 of 4 KiB), so a class's live blocks spread over many pages and a
// block freed is seldom in the page malloc hands out from: the block handed out is
// then one freed long before, cold in the cache and the TLB. Blocks of 1-2 KiB get
// 128 KiB pages and 2-8 KiB ones 256 KiB pages (at least 32 blocks, 64 up to 4 KiB);
// a page is carved lazily, so what a thread touches of a class stays what it uses.
constexpr unsigned class_slices(unsigned c) {
  const size_t b = class_size(c);
  if (b <= kSmallMax) return b <= 1024 ? 1 : (b <= 2048 ? 2 : 4);
  return class_kind(c) == kPageMedium ? 16 : kLargePageSlices;
}
static_assert(class_slices(class_of_formula(1024)) == 1 && class_slices(class_of_formula(1025)) == 2);
static_assert(class_slices(class_of_formula(4096)) == 4 && class_slices(class_of_formula(kSmallMax)) == 4);
static_assert(class_slices(class_of_formula(88 * 1024)) == 16 && class_slices(kNumClasses - 1) == kLargePageSlices);

static_assert(class_size(kNumClasses - 1) == kLargeMax);
static_assert(class_of_formula(kLargeMax) == kNumClasses - 1);
static_assert(class_of_formula(129) == 8 && class_size(8) == 144);
static_assert(class_size(class_of_formula(96 * 1024)) == 96 * 1024);
static_assert(class_kind(class_of_formula(96 * 1024)) == kPageLarge);
static_assert(class_kind(class_of_formula(88 * 1024)) == kPageMedium);

}  // namespace scav
