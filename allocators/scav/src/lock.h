// lock.h - a small futex mutex for the allocator's slow paths (arena bitmaps, heap
// list, huge cache, purge guard). Any thread. Every lock of this kind is taken in the
// fork prepare handler, so fork() never leaves one held in the child.
#pragma once

#include <atomic>
#include <cstdint>

#include "os.h"

namespace scav {

// state: 0 unlocked, 1 locked, 2 locked with (maybe) waiters.
class Lock {
 public:
  bool try_lock() {
    uint32_t z = 0;
    return state_.compare_exchange_strong(z, 1, std::memory_order_acquire);
  }
  void lock() {
    if (try_lock()) return;
    for (int i = 0; i < 64; i++) {
      __builtin_ia32_pause();
      if (state_.load(std::memory_order_relaxed) == 0 && try_lock()) return;
    }
    while (state_.exchange(2, std::memory_order_acquire) != 0) os::futex_wait(&state_, 2, -1);
  }
  void unlock() {
    if (state_.exchange(0, std::memory_order_release) == 2) os::futex_wake(&state_, 1);
  }
  // Fork child: the only thread left; whatever the parent held is ours to drop.
  void reset() { state_.store(0, std::memory_order_relaxed); }
  bool held() const { return state_.load(std::memory_order_relaxed) != 0; }

 private:
  std::atomic<uint32_t> state_{0};
};

class LockGuard {
 public:
  explicit LockGuard(Lock& l) : l_(l) { l_.lock(); }
  ~LockGuard() { l_.unlock(); }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  Lock& l_;
};

}  // namespace scav
