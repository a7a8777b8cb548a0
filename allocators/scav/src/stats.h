// stats.h - process-wide counters. Any thread adds with relaxed atomics; readers get a
// snapshot that is consistent per counter, not across counters.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace scav {

struct Stats {
  std::atomic<int64_t> page_bytes{0};       // bytes of arena pages owned by heaps
  std::atomic<int64_t> huge_bytes{0};       // bytes of live direct mappings
  std::atomic<int64_t> huge_blocks{0};      // live direct mappings
  std::atomic<int64_t> huge_cached{0};      // bytes of freed direct mappings kept
  std::atomic<int64_t> arena_committed{0};  // arena slices that may be resident
  std::atomic<int64_t> arena_meta{0};       // arena headers, bitmaps, page descriptors
  std::atomic<int64_t> purge_pending{0};    // free arena slices awaiting their purge
  std::atomic<uint64_t> purged{0};          // bytes handed back to the OS by purges
  std::atomic<uint64_t> purge_passes{0};
  std::atomic<uint64_t> purge_calls{0};     // madvise calls of purges
  std::atomic<uint64_t> scavenger_wakes{0};
  std::atomic<uint64_t> scavenger_turns{0};
  std::atomic<uint64_t> scavenger_started{0};
  std::atomic<uint64_t> pages_freed{0};     // pages returned from heaps to arenas
  std::atomic<uint64_t> pages_alloc{0};
  std::atomic<uint64_t> os_mmaps{0};
  std::atomic<uint64_t> os_munmaps{0};
  std::atomic<uint64_t> arenas{0};
  std::atomic<uint64_t> heaps{0};
  std::atomic<uint64_t> idle_handoffs{0};
  std::atomic<uint64_t> cache_steals{0};   // cached pages the scavenger took from heaps
  std::atomic<uint64_t> purge_refaults{0}; // purged slices taken again within the delay
  std::atomic<uint64_t> purge_refault_bytes{0};  // bytes of such refaults, all told
  std::atomic<uint64_t> hold_kept[3] = {};  // by HoldKind: bytes the last pass kept past their plain delay
  std::atomic<uint64_t> hold_cached[2] = {};  // small, large: bytes of cache slots the last visits hold (cache_visit)
  std::atomic<uint64_t> hold_shrinks[3] = {};  // by HoldKind: releases past kShrinkBytes that turned the hold off
  std::atomic<uint64_t> interiors_purged{0};  // bytes purged inside free blocks of idle heaps
  std::atomic<uint64_t> remote_batched{0};  // remote frees pushed in batches of more than one
  std::atomic<uint64_t> thp_collapses{0};   // 2 MiB regions the scavenger made one huge page
  std::atomic<uint64_t> thp_collapse_added{0};  // bytes those collapses made resident (absent pages)
  std::atomic<uint64_t> thp_collapse_skips{0};  // looks that found a region too little resident
  std::atomic<uint64_t> thp_collapse_failures{0};  // collapses the kernel refused
  std::atomic<int64_t> thp_collapsed_bytes{0};  // regions collapsed and not split by a purge since
};

extern Stats g_stats;

template <class T, class V>
inline void stat_add(std::atomic<T>& c, V v) {
  c.fetch_add(T(v), std::memory_order_relaxed);
}

size_t stats_json(char* buf, size_t len);

// The figures glibc's mallinfo2 asks for, in bytes (negative transients read as 0).
struct StatsView {
  size_t arena_committed, page_bytes, huge_blocks, huge_bytes, huge_cached, purge_pending, purged;
};
StatsView stats_view();

}  // namespace scav
