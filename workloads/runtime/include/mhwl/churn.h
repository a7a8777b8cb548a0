// A working set held at a steady level while it churns: slots of heap blocks,
// each replaced now and then by a new block of a newly drawn size, so that
// allocation and free go on while the live heap stays about level (the sum of
// the slots' sizes is stationary around slots * mean size). For the growth
// workloads (leak-rate, flat-churn). One thread owns a ChurnSet.
#pragma once

#include <chrono>
#include <cstdlib>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include "mhwl/touch.h"

namespace mhwl {

class ChurnSet {
 public:
  // Enough slots of [min_block, max_block] bytes to hold about `level` bytes.
  ChurnSet(std::mt19937_64& rng, size_t level, size_t min_block, size_t max_block)
      : rng_(rng), size_(min_block, max_block), slots_(std::max<size_t>(1, level / ((min_block + max_block) / 2))) {
    for (auto& s : slots_) s = fresh();
  }
  ~ChurnSet() {
    for (void* p : slots_) std::free(p);
  }
  ChurnSet(const ChurnSet&) = delete;
  ChurnSet& operator=(const ChurnSet&) = delete;

  // Replaces `n` slots drawn at random.
  void churn(size_t n) {
    std::uniform_int_distribution<size_t> pick(0, slots_.size() - 1);
    for (size_t i = 0; i < n; ++i) {
      void*& slot = slots_[pick(rng_)];
      std::free(slot);
      slot = fresh();
    }
  }

 private:
  void* fresh() {
    const size_t n = size_(rng_);
    void* p = std::malloc(n);
    if (!p) throw std::bad_alloc();
    touch_pages(p, n);
    return p;
  }
  std::mt19937_64& rng_;
  std::uniform_int_distribution<size_t> size_;
  std::vector<void*> slots_;
};

// Runs `step` every `tick` until `seconds` have passed since `from`, handing it
// the seconds elapsed; sleeps between steps (about 1% of a core for a step of
// a few hundred replacements every 10 ms).
template <class Step>
void every_tick_until(std::chrono::steady_clock::time_point from, double seconds, std::chrono::milliseconds tick,
                      Step step) {
  using Clock = std::chrono::steady_clock;
  for (auto next = Clock::now() + tick;; next += tick) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - from).count();
    if (elapsed >= seconds) return;
    step(elapsed);
    std::this_thread::sleep_until(next);
  }
}

}  // namespace mhwl
