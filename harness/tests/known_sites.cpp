// A program whose heap has known call sites, for the tests of the sampled call
// sites and the peak snapshot (test_heap_sites.py): load_index holds 64 MiB in
// 256 KiB blocks, parse_rows 40 MiB in 4 KiB blocks, and 64 small sites
// (small_site<0..63>) 16 KiB each in small blocks, all held at the mark
// "loaded" and freed by the mark "freed". Each site's usable bytes are
// reported (workload.load_index_bytes, parse_rows_bytes, small_bytes): the
// truth the estimates are held to.
#include <malloc.h>

#include <array>
#include <cstdlib>
#include <memharness/mark.h>
#include <utility>
#include <vector>

namespace {

using Blocks = std::vector<void*>;

// `bytes` in blocks of `block`, their usable bytes returned; inlined into each
// site, so that the site's own frame is the one that calls malloc.
__attribute__((always_inline)) inline size_t hold(Blocks& keep, size_t bytes, size_t block) {
  size_t usable = 0;
  for (size_t held = 0; held < bytes; held += block) {
    keep.push_back(std::malloc(block));
    usable += malloc_usable_size(keep.back());
  }
  return usable;
}

__attribute__((noinline)) size_t load_index(Blocks& keep) { return hold(keep, size_t(64) << 20, 256 << 10); }

__attribute__((noinline)) size_t parse_rows(Blocks& keep) { return hold(keep, size_t(40) << 20, 4 << 10); }

// 64 distinct functions (their block sizes differ, so no two are folded into
// one), each the innermost frame of its own blocks.
template <int N>
__attribute__((noinline)) size_t small_site(Blocks& keep) {
  return hold(keep, 16 << 10, 32 + 2 * N);
}

template <size_t... N>
constexpr std::array<size_t (*)(Blocks&), sizeof...(N)> small_sites(std::index_sequence<N...>) {
  return {&small_site<int(N)>...};
}

}  // namespace

int main() {
  Blocks index, rows, small;
  index.reserve(512);
  rows.reserve(16384);
  small.reserve(64 * 1024);
  memharness_mark("start");
  const size_t index_bytes = load_index(index);
  const size_t rows_bytes = parse_rows(rows);
  size_t small_bytes = 0;
  for (auto* site : small_sites(std::make_index_sequence<64>())) small_bytes += site(small);
  memharness_metric("load_index_bytes", double(index_bytes));
  memharness_metric("parse_rows_bytes", double(rows_bytes));
  memharness_metric("small_bytes", double(small_bytes));
  memharness_mark("loaded");
  for (Blocks* blocks : {&index, &rows, &small})
    for (void* p : *blocks) std::free(p);
  memharness_mark("freed");
  return 0;
}
