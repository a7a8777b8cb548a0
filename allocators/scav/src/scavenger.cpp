// scavenger.cpp - the purge schedule, purge passes and the scavenger thread.
// g_purge_expire and g_sched_seq are shared by all threads (atomics only); a pass runs
// under g_purge_guard, one at a time; the thread's own state is g_scav_state.
//
// The protocol, and the two bugs of seed 003 it avoids:
//  * A source (arena, heap, huge cache) is armed by CAS 0 -> E, and only the thread
//    that armed it lowers the global deadline (earliest wins). A pass resets the global
//    deadline FIRST and each source before it reads that source's state; at its end it
//    puts back the earliest expire still pending, read with an RMW (CAS 0 -> 0) so it
//    is ordered with a concurrent arming CAS. So a free that lands while a pass runs
//    either is seen by the pass or finds the source reset and arms the next pass itself:
//    nothing freed behind a pass is left without a deadline.
//  * A forced pass (scav_collect(true)) waits for the pass in progress instead of
//    giving up, then runs its own over everything.
// The scavenger never clears the global deadline itself; only a pass does.
#include "scavenger.h"

#include <sys/single_threaded.h>

#include <cerrno>

#include "arena.h"
#include "heap.h"
#include "huge.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "stats.h"

namespace scav {
namespace {

enum ScavState : uint32_t { kNotStarted = 0, kStarting = 1, kRunning = 2, kFailed = 3, kStopping = 4 };

std::atomic<uint64_t> g_purge_expire{0};  // earliest deadline of any source; 0 = none
std::atomic<uint32_t> g_sched_seq{0};     // futex word: bumped on each 0 -> set edge
std::atomic<uint32_t> g_scav_sleeping{0};
std::atomic<uint32_t> g_scav_state{kNotStarted};
std::atomic<bool> g_scav_stop{false};  // asked to return (scavenger_stop)
os::Thread g_scav_thread;
Lock g_purge_guard;

// Where the thread may be started (pthread_create, see os.cpp): once the C library is
// initialised (our constructor ran), and from a free() only while the process has a
// single thread. glibc frees exited threads' DTVs holding the lock of its stack list,
// which pthread_create takes; with one thread there is no exited thread to free. A
// free that may not start it leaves the deadline set, and the next malloc slow path,
// new thread or hand-off starts it.
std::atomic<bool> g_libc_ready{false};
std::atomic<bool> g_single_since_fork{false};  // a fork child that made no thread yet

bool may_start(bool from_free) {
  if (!g_libc_ready.load(std::memory_order_relaxed)) return false;
  return !from_free || __libc_single_threaded || g_single_since_fork.load(std::memory_order_relaxed);
}

// A hold (see scavenger.h): its value when last raised, and when that was. Relaxed:
// a heuristic that any thread may raise; a lost update costs one more refault.
constexpr uint64_t kHoldHalfLifeMs = 10000;
struct Hold {
  std::atomic<uint64_t> ms{0};
  std::atomic<uint64_t> raised_ms{0};
  std::atomic<uint64_t> refault_bytes{0};  // as of refault_ms
  std::atomic<uint64_t> refault_ms{0};
  // Releases of the kind in the current window of a plain delay, and the latest
  // window that went past kShrinkBytes.
  std::atomic<uint64_t> window_ms{0};
  std::atomic<uint64_t> window_bytes{0};
  std::atomic<uint64_t> shrink_ms{0};
};
Hold g_holds[kHoldKinds];  // by HoldKind

Hold& hold_of(HoldKind k) { return g_holds[unsigned(k)]; }

uint64_t hold_at(const Hold& h, uint64_t now) {
  uint64_t ms = h.ms.load(std::memory_order_relaxed);
  if (!ms) return 0;
  uint64_t raised = h.raised_ms.load(std::memory_order_relaxed);
  uint64_t halvings = now > raised ? (now - raised) / kHoldHalfLifeMs : 0;
  return halvings >= 64 ? 0 : ms >> halvings;
}

uint64_t hold_applied(HoldKind k, uint64_t now) {
  const uint64_t cap = uint64_t(option(Opt::kPurgeHoldMaxMs));
  const uint64_t shrink = hold_of(k).shrink_ms.load(std::memory_order_relaxed);
  if (shrink && now < shrink + cap) return 0;
  const uint64_t learnt = hold_at(hold_of(k), now);
  return hold_from_start(k) && cap > learnt ? cap : learnt;
}

void scavenger_main(void*) {
  const int64_t safety = option(Opt::kSafetyTimeoutMs);  // positive: its range (options.cpp)
  while (!g_scav_stop.load(std::memory_order_acquire)) {
    uint32_t seq = g_sched_seq.load(std::memory_order_seq_cst);
    uint64_t e = g_purge_expire.load(std::memory_order_seq_cst);
    uint64_t now = os::now_ms();
    if (e != 0 && e <= now) {
      stat_add(g_stats.scavenger_turns, 1);
      // Dropped because another thread is in a pass: that pass resets the deadline
      // and puts back what it leaves; look again shortly.
      if (!purge_pass(false, false, false, true)) os::sleep_ms(1);
      continue;
    }
    int64_t timeout = e == 0 ? safety : int64_t(e - now);
    if (timeout > safety) timeout = safety;
    // Announce the sleep, then re-check the word: a scheduler bumps the word before it
    // reads the flag, so either we see its bump here (or the futex does) or it sees
    // the flag and wakes us.
    g_scav_sleeping.store(1, std::memory_order_seq_cst);
    int r = EAGAIN;
    if (g_sched_seq.load(std::memory_order_seq_cst) == seq)
      r = os::futex_wait(&g_sched_seq, seq, timeout);
    g_scav_sleeping.store(0, std::memory_order_seq_cst);
    if (r != EAGAIN) stat_add(g_stats.scavenger_wakes, 1);
    if (r == ETIMEDOUT && e == 0) {
      // Safety net: nothing was scheduled for a whole timeout; look at every source
      // anyway (idle and abandoned heaps, pending arena ranges).
      stat_add(g_stats.scavenger_turns, 1);
      purge_pass(false, false, true, true);
    }
  }
}

void scavenger_start(bool from_free) {
  if (!may_start(from_free)) return;
  uint32_t st = kNotStarted;
  if (!g_scav_state.compare_exchange_strong(st, kStarting, std::memory_order_acq_rel)) return;
  int r = os::start_thread(scavenger_main, nullptr, "scav-scavenger", &g_scav_thread);
  g_scav_state.store(r ? kFailed : kRunning, std::memory_order_release);
  if (!r) stat_add(g_stats.scavenger_started, 1);
}

void poll(bool from_free) {
  uint64_t e = g_purge_expire.load(std::memory_order_relaxed);
  if (SCAV_LIKELY(e == 0)) return;
  uint32_t st = g_scav_state.load(std::memory_order_relaxed);
  if (st == kRunning || st == kStarting) return;
  if (st == kNotStarted && option(Opt::kScavenger)) {
    scavenger_start(from_free);
    if (g_scav_state.load(std::memory_order_relaxed) != kNotStarted) return;
  }
  if (os::now_ms() >= e) purge_pass(false, false);  // no scavenger (yet): purge inline
}

bool pass_locked(bool force, bool scan, bool on_scavenger) {
  stat_add(g_stats.purge_passes, 1);
  g_purge_expire.exchange(0, std::memory_order_seq_cst);
  uint64_t now = os::now_ms();
  heaps_purge(force, scan, now);  // first: pages it takes are due now, for the arenas
  huge_purge(force, now);
  arenas_purge(force, scan, now, on_scavenger);
  uint64_t e = arenas_earliest_expire();
  uint64_t h = heaps_earliest_expire();
  uint64_t g = huge_earliest_expire();
  e = earlier_deadline(e, earlier_deadline(h, g));
  if (e) purge_schedule(e);
  return true;
}

}  // namespace

uint64_t purge_hold_ms(HoldKind k) { return hold_applied(k, os::now_ms()); }

void hold_note_release(HoldKind k, uint64_t bytes, uint64_t now) {
  Hold& h = hold_of(k);
  uint64_t in_window;
  if (now >= h.window_ms.load(std::memory_order_relaxed) + purge_delay_ms()) {
    h.window_ms.store(now, std::memory_order_relaxed);
    h.window_bytes.store(bytes, std::memory_order_relaxed);
    in_window = bytes;
  } else {
    in_window = h.window_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  }
  if (in_window > kShrinkBytes) {
    // Every release past the mark moves the end of the hold's pause; only the one
    // that started it counts as a shrink.
    const uint64_t prev = h.shrink_ms.exchange(now ? now : 1, std::memory_order_relaxed);
    if (!prev || now >= prev + uint64_t(option(Opt::kPurgeHoldMaxMs))) stat_add(g_stats.hold_shrinks[unsigned(k)], 1);
  }
}

bool hold_off_since(uint64_t since) {
  for (const Hold& h : g_holds)
    if (const uint64_t at = h.shrink_ms.load(std::memory_order_relaxed); at && at >= since) return true;
  return false;
}

uint64_t hold_refault_bytes(HoldKind k, uint64_t now) {
  const Hold& h = hold_of(k);
  uint64_t bytes = h.refault_bytes.load(std::memory_order_relaxed);
  uint64_t at = h.refault_ms.load(std::memory_order_relaxed);
  uint64_t halvings = now > at ? (now - at) / kHoldHalfLifeMs : 0;
  return halvings >= 64 ? 0 : bytes >> halvings;
}

uint64_t hold_budget_bytes(HoldKind k, uint64_t now) {
  if (!hold_applied(k, now)) return 0;
  uint64_t twice = 2 * hold_refault_bytes(k, now);
  return twice > kHoldFloorBytes ? twice : kHoldFloorBytes;
}

// Every source waits the plain delay; a pass keeps what it holds within the budget
// (arenas_purge, huge_purge).
uint64_t purge_delay_ms() { return uint64_t(option(Opt::kPurgeDelayMs)); }

uint64_t purge_deadline_from_now() { return os::now_ms() + purge_delay_ms(); }

void purge_note_reuse(HoldKind k, uint64_t now, uint64_t purged_ms, bool purged_early, uint64_t bytes) {
  const uint64_t cap = uint64_t(option(Opt::kPurgeHoldMaxMs));
  if (!cap) return;
  Hold& h = hold_of(k);
  // The memory sat free for purge_delay_ms + the hold then + age: when even the
  // longest hold would not have kept it that long, holding longer only keeps
  // memory for nothing. Memory the budget left out was purged at the plain delay.
  const uint64_t age_ms = now > purged_ms ? now - purged_ms : 0;
  if ((purged_early ? 0 : hold_applied(k, now)) + age_ms > cap) return;
  // What the budget learns from: every refault the longest hold would have saved.
  h.refault_bytes.store(hold_refault_bytes(k, now) + bytes, std::memory_order_relaxed);
  h.refault_ms.store(now, std::memory_order_relaxed);
  stat_add(g_stats.purge_refault_bytes, int64_t(bytes));
  // Purged before the hold last grew: that purge is what made it grow.
  if (purged_ms <= h.raised_ms.load(std::memory_order_relaxed)) return;
  stat_add(g_stats.purge_refaults, 1);
  // Straight to the longest hold: one refault episode instead of one per doubling
  // (how often a page comes back depends on how many pages are kept, so a period
  // measured under a shorter hold is no guide). Its cost is bounded: memory that
  // is not reused is purged at most cap later than it would have been.
  h.raised_ms.store(now, std::memory_order_relaxed);
  h.ms.store(cap, std::memory_order_relaxed);
}

void purge_schedule(uint64_t e) {
  if (!e) e = 1;
  uint64_t cur = g_purge_expire.load(std::memory_order_seq_cst);
  for (;;) {
    if (cur != 0 && cur <= e) return;
    if (g_purge_expire.compare_exchange_weak(cur, e, std::memory_order_seq_cst)) break;
  }
  // The 0 -> set edge wakes, and so does a deadline that comes more than an eighth of
  // the delay before the one the scavenger sleeps for: that one may be a hold away
  // (words kept for the hold re-arm their arena for its end), and a heap freed now
  // would wait for it. A burst of frees (later deadlines) and a heap's look (an
  // eighth before its pages fall due) cost no wake.
  if (cur != 0 && cur - e <= purge_delay_ms() / 8) return;
  g_sched_seq.fetch_add(1, std::memory_order_seq_cst);
  if (g_scav_sleeping.load(std::memory_order_seq_cst)) os::futex_wake(&g_sched_seq, 1);
}

void purge_arm(std::atomic<uint64_t>& source, uint64_t e) {
  uint64_t zero = 0;
  if (source.compare_exchange_strong(zero, e, std::memory_order_seq_cst)) purge_schedule(e);
}

void purge_arm_earlier(std::atomic<uint64_t>& source, uint64_t e) {
  uint64_t cur = source.load(std::memory_order_seq_cst);
  for (;;) {
    if (cur != 0 && cur <= e) {
      // Still an RMW so we are ordered after a pass's reset of this source.
      if (source.compare_exchange_strong(cur, cur, std::memory_order_seq_cst)) break;
      continue;
    }
    if (source.compare_exchange_weak(cur, e, std::memory_order_seq_cst)) break;
  }
  purge_schedule(cur != 0 && cur <= e ? cur : e);
}

bool purge_pass(bool force, bool wait, bool scan, bool on_scavenger) {
  if (!g_purge_guard.try_lock()) {
    if (!wait) return false;
    g_purge_guard.lock();
  }
  bool r = pass_locked(force, scan, on_scavenger);
  g_purge_guard.unlock();
  return r;
}

void scavenger_poll() { poll(false); }
void scavenger_poll_free() { poll(true); }

void scavenger_ensure_started() {
  if (SCAV_LIKELY(g_scav_state.load(std::memory_order_relaxed) != kNotStarted)) return;
  if (option(Opt::kScavenger)) scavenger_start(false);
}

void scavenger_libc_ready() {
  g_libc_ready.store(true, std::memory_order_relaxed);
  scavenger_poll();
}

void scavenger_new_thread() {
  g_single_since_fork.store(false, std::memory_order_relaxed);
  // A program with threads gets its scavenger now, from this malloc, rather than wait
  // for a malloc slow path: its frees may not start it (see may_start).
  if (!__libc_single_threaded) scavenger_ensure_started();
}

bool scavenger_stop() {
  uint32_t st = g_scav_state.load(std::memory_order_acquire);
  for (;;) {
    if (st == kStarting) {
      os::yield();
      st = g_scav_state.load(std::memory_order_acquire);
      continue;
    }
    if (st != kRunning) return false;
    if (g_scav_state.compare_exchange_weak(st, kStopping, std::memory_order_acq_rel)) break;
  }
  g_scav_stop.store(true, std::memory_order_release);
  g_sched_seq.fetch_add(1, std::memory_order_seq_cst);
  os::futex_wake(&g_sched_seq, 1);
  os::join_thread(g_scav_thread);
  g_scav_stop.store(false, std::memory_order_relaxed);
  g_scav_state.store(kNotStarted, std::memory_order_release);
  return true;
}

void purge_fork_prepare() { g_purge_guard.lock(); }
void purge_fork_parent() { g_purge_guard.unlock(); }
void purge_fork_child() {
  g_purge_guard.reset();
  g_scav_sleeping.store(0, std::memory_order_relaxed);
  // The scavenger was not copied into the child; start a new one when needed.
  uint32_t st = g_scav_state.load(std::memory_order_relaxed);
  if (st == kRunning || st == kStarting) g_scav_state.store(kNotStarted, std::memory_order_relaxed);
  g_single_since_fork.store(true, std::memory_order_relaxed);
}

}  // namespace scav
