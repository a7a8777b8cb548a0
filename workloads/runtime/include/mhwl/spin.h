// Busy waiting for workloads whose threads must not block (no sleep, no futex):
// the loops only read the monotonic clock (vDSO, no system call) and the caller's
// predicate. Stateless; any thread.
#pragma once

#include <chrono>

namespace mhwl {

using SpinClock = std::chrono::steady_clock;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until pred() is true (returns true) or the deadline passes (returns false).
template <class Pred>
bool spin_until(SpinClock::time_point deadline, Pred pred) {
  for (;;) {
    if (pred()) return true;
    if (SpinClock::now() >= deadline) return false;
    cpu_relax();
  }
}

}  // namespace mhwl
