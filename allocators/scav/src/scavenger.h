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
void purge_schedule(uint64_t expire);
// The delay between a free and its purge: purge_delay_ms plus the hold. The hold is
// set to purge_hold_max_ms when purged memory is faulted back in so soon that a
// delay that much longer would have kept it: a program that reuses memory at a
// steady period longer than purge_delay_ms (a server between requests) stops paying
// a purge and a refault per period. The hold halves every kHoldHalfLifeMs without
// such a reuse; memory that is not reused is still purged, at most
// purge_hold_max_ms later. Two holds, each learnt from the reuse of the memory it
// applies to: arena pages (with the heaps' cached pages), and the huge cache.
//
// Arena pages are held in proportion to what was faulted back: a pass keeps pages
// past their plain delay only up to a budget, twice the bytes refaulted recently
// (halving with the hold) and at least kHoldFloorBytes, so that one small block
// taken on a purged slice does not keep hundreds of megabytes a second longer,
// while a server whose request buffers come back every period keeps them.
enum class HoldKind : unsigned { kArena = 0, kHuge = 1 };
inline constexpr uint64_t kHoldFloorBytes = uint64_t(4) << 20;
// The delay a source waits before its pass: purge_delay_ms, plus the hold for the
// huge cache (arena pages are held by the pass, within the budget).
uint64_t purge_delay_ms(HoldKind k, uint64_t now);
// Now plus that delay.
uint64_t purge_deadline_from_now(HoldKind k = HoldKind::kArena);
// `bytes` purged at `purged_ms` are being faulted in again (arena slices taken
// fresh, or a mapping made where one the huge cache dropped on its deadline would
// have done); `purged_early`: at the plain delay, the hold's budget being spent.
// It counts when a hold of purge_hold_max_ms would have kept them.
void purge_note_reuse(HoldKind k, uint64_t now, uint64_t purged_ms, bool purged_early, uint64_t bytes);
uint64_t purge_hold_ms(HoldKind k = HoldKind::kArena);
// The bytes refaulted recently (halving every kHoldHalfLifeMs), and how much the
// hold may keep past the plain delay now (0 without a hold).
uint64_t hold_refault_bytes(HoldKind k, uint64_t now);
uint64_t hold_budget_bytes(HoldKind k, uint64_t now);

// Run one pass. force: purge everything pending now, whatever its deadline. wait: if
// another thread is in a pass, wait for it and then run ours (else return false).
// scan: also look at sources that are not armed (the scavenger's safety net).
bool purge_pass(bool force, bool wait, bool scan = false);

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
