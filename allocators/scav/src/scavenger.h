// scavenger.h - the purge schedule (one global deadline fed by per-source deadlines),
// purge passes (one at a time, under the purge guard), and the scavenger thread that
// sleeps until the deadline. Any thread may schedule; passes run on the scavenger, in
// scav_collect, or inline on slow paths when the scavenger is off.
#pragma once

#include <atomic>
#include <cstdint>

namespace scav {

// A source (an arena, a heap, the huge cache) has an expire word: 0 when nothing is
// pending, else when its earliest pending item falls due. Arming sets it only from 0,
// then lowers the global deadline; the 0 -> set edge of the global deadline is the
// only thing that wakes the scavenger, so a burst of frees costs one wake.
void purge_arm(std::atomic<uint64_t>& source, uint64_t expire);
// Same, but also lowers a source that is armed later than `expire`.
void purge_arm_earlier(std::atomic<uint64_t>& source, uint64_t expire);
// The earlier of two deadlines, 0 being none.
inline uint64_t earlier_deadline(uint64_t a, uint64_t b) { return !a || (b && b < a) ? b : a; }
void purge_schedule(uint64_t expire);
// The delay between a free and its purge: purge_delay_ms plus a *hold*, which a pass
// applies within a budget. The hold is set to purge_hold_max_ms when purged memory is
// faulted back in so soon that a delay that much longer would have kept it: a program
// that reuses memory at a steady period longer than purge_delay_ms (a server between
// requests) stops paying a purge and a refault per period. The hold halves every
// kHoldHalfLifeMs without such a reuse; memory that is not reused is still purged, at
// most purge_hold_max_ms later. One hold per kind of memory, each learnt from the
// reuse of that kind: small pages (64 KiB and 1 MiB pages, blocks up to 88 KiB), large
// pages (4 MiB pages, blocks of 96-512 KiB) and the huge cache (blocks above 512 KiB).
//
// A pass keeps memory past its plain delay only up to a budget per kind, twice the
// bytes of that kind refaulted recently (halving with the hold) and at least
// kHoldFloorBytes, so that one small block taken on a purged slice does not keep
// hundreds of megabytes a second longer, while a server whose request buffers come
// back every period keeps them. Large pages and huge blocks are held from the start,
// within the floor: one of their blocks costs 24 to 128 faults and more to fault back,
// so a server's first request buffers are kept between its first requests instead of
// being purged once to teach the hold (one refault episode was 2.6 faults per request
// over a 10 s run at 256 KiB). Large pages count what their blocks touched, not the
// 4 MiB of address space. A heap's cache slot of a kind whose hold applies is looked
// at a hold apart, within what the budget leaves (cache_visit in heap_scavenge.cpp): a
// block a thread cycles at such a period stays in its slot, and when its slot goes back
// its hold is spent (the arena does not keep it for another).
//
// A release of more than kShrinkBytes of one kind within a plain delay is a heap
// shrinking, not a working set cycling within the floor: that kind's hold, learnt or
// from the start, is off until purge_hold_max_ms after the latest such release, so a
// program that frees its heap and goes idle is back at its start a delay later (what
// the floor would keep is a guess no reuse backs). Refaults meanwhile still train the
// hold for afterwards.
enum class HoldKind : unsigned { kSmall = 0, kLarge = 1, kHuge = 2 };
inline constexpr unsigned kHoldKinds = 3;
inline constexpr uint64_t kHoldFloorBytes = uint64_t(4) << 20;
inline constexpr uint64_t kShrinkBytes = 4 * kHoldFloorBytes;
inline constexpr bool hold_from_start(HoldKind k) { return k != HoldKind::kSmall; }
// purge_delay_ms: what every source waits before its pass looks at it.
uint64_t purge_delay_ms();
// Now plus that delay.
uint64_t purge_deadline_from_now();
// `bytes` purged at `purged_ms` are being faulted in again (arena slices taken
// fresh, or a mapping made where one the huge cache dropped on its deadline would
// have done); `purged_early`: at the plain delay, the hold's budget being spent.
// It counts when a hold of purge_hold_max_ms would have kept them.
void purge_note_reuse(HoldKind k, uint64_t now, uint64_t purged_ms, bool purged_early, uint64_t bytes);
// `bytes` of kind k were freed to their source (an arena page, a huge block).
void hold_note_release(HoldKind k, uint64_t bytes, uint64_t now);
// Whether a shrink turned a kind's hold off at or after `since`.
bool hold_off_since(uint64_t since);
// The hold a pass applies to kind k now: the learnt one, or purge_hold_max_ms for a
// kind held from the start.
uint64_t purge_hold_ms(HoldKind k);
// The bytes refaulted recently (halving every kHoldHalfLifeMs), and how much the
// hold may keep past the plain delay now (0 without a hold).
uint64_t hold_refault_bytes(HoldKind k, uint64_t now);
uint64_t hold_budget_bytes(HoldKind k, uint64_t now);

// Run one pass. force: purge everything pending now, whatever its deadline. wait: if
// another thread is in a pass, wait for it and then run ours (else return false).
// scan: also look at sources that are not armed (the scavenger's safety net).
// on_scavenger: the scavenger's own pass, which may also collapse (arenas_purge).
bool purge_pass(bool force, bool wait, bool scan = false, bool on_scavenger = false);

// Called at the end of allocator slow paths with no lock held: starts the scavenger
// when something is scheduled, or purges inline when the scavenger is off (or may not
// start yet). The free side starts it only where pthread_create is safe (see
// may_start in scavenger.cpp).
void scavenger_poll();
void scavenger_poll_free();
void scavenger_ensure_started();
// The C library is initialised (our constructor): the thread may be started.
void scavenger_libc_ready();
// A thread allocates for the first time.
void scavenger_new_thread();
// Stop the thread and wait until the kernel no longer counts it (for unshare and setns,
// which a process with threads cannot always make). Returns whether it was running.
bool scavenger_stop();

void purge_fork_prepare();
void purge_fork_parent();
void purge_fork_child();

}  // namespace scav
