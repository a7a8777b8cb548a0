// arena.h - arenas: large reservations of address space cut into 64 KiB slices, and
// the map from any address to its arena. Arena bitmaps are guarded by the arena's
// lock; the address map and arena list only grow and are read without locks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "lock.h"
#include "page.h"
#include "scavenger.h"
#include "sizeclass.h"

namespace scav {

// Arenas are aligned to, and sized in, 64 MiB units, so the map needs one entry per
// 64 MiB of the 47-bit user address space: 2^21 entries (16 MiB of .bss, touched only
// where arenas are).
constexpr unsigned kArenaUnitShift = 26;
constexpr size_t kArenaUnit = size_t(1) << kArenaUnitShift;
constexpr size_t kArenaMapSize = size_t(1) << (47 - kArenaUnitShift);
constexpr unsigned kMaxArenas = 1024;

// A 2 MiB region of an arena, under the arena's lock: huge, it is one huge page since
// a collapse and no purge has touched it since; due, a time at which a pass looks
// whether it is still in use and resident, to collapse it then (0: no look pending);
// tries, the looks that found too little of it resident since it last filled.
constexpr unsigned kRegionShift = 21;
constexpr size_t kRegionSize = size_t(1) << kRegionShift;
constexpr unsigned kRegionSlices = 1u << (kRegionShift - kSliceShift);
static_assert(kRegionSlices * 2 == 64, "a bitmap word is two regions");
struct Region {
  uint64_t due;
  uint32_t huge;
  uint32_t tries;
};

// Slice bitmaps, one bit per slice, all under `lock`:
//   free      - not part of any page
//   committed - may be resident (handed out since its last purge)
//   pending   - free and committed, waiting for its purge
//   word_due  - per bitmap word (64 slices, 4 MiB): when its pending slices fall due,
//               the time of the latest free into it plus the purge delay
//   purged    - purged by a scheduled (not forced) pass and not taken since; with
//               word_purged (per word: the time of its latest such purge) it tells
//               a page taken soon after its purge, which lengthens the delay
//               (purge_note_reuse); word_early: that purge came at the plain
//               delay because the hold's budget was spent
//   word_kind - per word: the HoldKind of its latest free (a 4 MiB page fills a word)
//   word_touched - per word of a large page: the bytes its blocks touched (from the
//               page's start), the most since the word was last taken purged; what
//               the hold's budget counts for it, and what a refault brings back
// regions  - per 2 MiB (half a word, the span of one huge page): whether the scavenger
//            made it one huge page (huge; cleared when a purge splits it), and when
//            it looks at it for that (due, 0 when it will not: see arenas_purge);
//            look_bits has a bit per region whose due is set
// Invariants: pending ⊆ free ∩ committed; purged ⊆ free \ committed; the meta
// slices are never free.
// purge_expire: 0, or a time at or before the earliest word_due of a word with
// pending bits; set only from 0 by a free (arms the arena), reset to 0 by the pass
// that visits it, which re-arms it with the earliest word it left pending.
struct Arena {
  uintptr_t base;  // == this
  size_t size;
  uint32_t slice_count;
  uint32_t word_count;
  uint32_t meta_slices;
  uint32_t index;
  Lock lock;
  std::atomic<uint64_t> purge_expire;
  uint64_t* free_bits;
  uint64_t* committed_bits;
  uint64_t* pending_bits;
  uint64_t* word_due;
  uint64_t* purged_bits;
  uint64_t* word_purged;
  uint64_t* word_early;
  uint64_t* word_kind;
  uint64_t* word_touched;
  Region* regions;
  uint64_t* look_bits;  // a bit per region whose due is set
  uintptr_t* slice_page;  // SliceRef of the page that covers each slice, the released
                          // page, or 0 (never used)
  Page* pages;            // descriptor of a page, indexed by its first slice
  uint64_t* secure_bits;  // SCAV_SECURE=1: kSecureWordsPerSlice per slice (secure.cpp)
};

// A slice's worth of block bits: a 64 KiB page of 16-byte blocks has 4096 blocks.
constexpr size_t kSecureWordsPerSlice = kSliceSize / kMinAlign / 64;

// A slice map entry: the address of the page's descriptor (128-byte aligned) with the
// page's size class in the low bits, so that free() has the class without a further
// load through the page (the cache slot it stores to depends on it).
using SliceRef = uintptr_t;
constexpr uintptr_t kSliceRefClassMask = 127;
static_assert(kNumClasses <= kSliceRefClassMask + 1 && sizeof(Page) == 128);
inline Page* slice_ref_page(SliceRef r) { return reinterpret_cast<Page*>(r & ~kSliceRefClassMask); }
inline unsigned slice_ref_class(SliceRef r) { return unsigned(r & kSliceRefClassMask); }

// What the slices of a page given back to its arena map to: a page nobody owns
// (owner_tag 0, no blocks), so that a free of a block that was in it goes the slow
// path and is reported as a double free instead of following a null page.
extern Page g_released_page;

extern Arena* g_arena_map[kArenaMapSize];
// For each 64 MiB unit of an arena, the part of its slice map that covers the unit
// (1024 entries): free() finds a page with two dependent loads.
extern uintptr_t* g_slice_map[kArenaMapSize];
constexpr unsigned kSlicesPerUnit = unsigned(kArenaUnit >> kSliceShift);
extern Arena* g_arenas[kMaxArenas];
extern std::atomic<uint32_t> g_arena_count;

inline Arena* arena_of(const void* p) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return g_arena_map[(a >> kArenaUnitShift) & (kArenaMapSize - 1)];
}

// Null for an address outside every arena (a huge block).
inline uintptr_t* unit_slices_of(const void* p) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return g_slice_map[(a >> kArenaUnitShift) & (kArenaMapSize - 1)];
}
inline SliceRef unit_ref_of(uintptr_t* unit, const void* p) {
  return unit[(reinterpret_cast<uintptr_t>(p) >> kSliceShift) & (kSlicesPerUnit - 1)];
}

inline Page* arena_page_of(Arena* a, const void* p) {
  return slice_ref_page(a->slice_page[(reinterpret_cast<uintptr_t>(p) - a->base) >> kSliceShift]);
}

// Take a page of `slices` slices (1, 16 or 64; aligned to its size), creating an arena
// when all are full. Returns null on ENOMEM. Fills the slice map for the page.
Page* arena_alloc_page(unsigned slices);
// Record the page's size class in its slice map entries (before its first block is
// handed out; see SliceRef).
void arena_set_page_class(Page* pg, unsigned cls);

// The hold a page of kind k falls under, and what a page counts against its kind's
// budget: a large page what its blocks touched (carved from its start), a smaller one
// all of its slices.
constexpr HoldKind hold_kind_of(PageKind k) { return k == kPageLarge ? HoldKind::kLarge : HoldKind::kSmall; }
inline uint64_t page_hold_bytes(const Page* pg) {
  if (pg->slice_count == kLargePageSlices) return uint64_t(pg->carved) * pg->bsize;
  return uint64_t(pg->slice_count) * kSliceSize;
}

// Give a page's slices back; they are purged purge_delay_ms later (or by the current
// pass when due_now). held: they were kept for their kind's hold already (a cache slot
// the scavenger kept), so the arena does not keep them for another. Arms the arena and
// the global schedule.
void arena_free_page(Page* pg, bool due_now, bool held = false);

// Purge the arenas that are due (all when force). Part of a purge pass: the caller
// holds the purge guard. scan: also arenas that are not armed. Returns bytes purged.
// collapse (the scavenger's own passes, not forced): also make the regions whose look
// is due one huge page each where they are still in use and resident, a few at a
// time (arena.cpp): a program's long-lived heap then costs a TLB entry per 2 MiB
// instead of per 4 KiB. Looks schedule no pass of their own.
uint64_t arenas_purge(bool force, bool scan, uint64_t now, bool collapse);
// Whether regions that fill are looked at for a collapse at all (thp_collapse_ms, with
// a scavenger, purges that drop pages, and THP not asked for everywhere by thp=1).
bool collapse_enabled();

// The kernel split the huge pages over [lo, hi) of arena a (a purge inside them).
void arena_note_split(Arena* a, uintptr_t lo, uintptr_t hi);

// Earliest expire of any arena, 0 if none (the pass puts it back at its end).
uint64_t arenas_earliest_expire();

void arenas_lock_all();
void arenas_unlock_all();
void arenas_reset_locks();

}  // namespace scav
