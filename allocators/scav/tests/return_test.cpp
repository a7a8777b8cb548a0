// return_test.cpp - when freed memory goes back: a thread that frees a mixed heap and
// then makes no allocator call gets it purged about one purge delay after its last
// free, in one step (not a delay in the heap and another in the arena), and not much
// earlier. ctest runs it with SCAV_PURGE_DELAY_MS=400, so that one delay and two or
// three are far apart next to the noise of a loaded machine.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "scav.h"
#include "test_util.h"

using scav_test::kMiB;
using scav_test::stat;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

TEST(Return, MixedHeapComesBackOneDelayAfterTheLastFree) {
  const int64_t delay = stat("purge_delay_ms");
  ASSERT_EQ(delay, 400);
  // Small, medium and large classes (the huge cache has its own exact deadline).
  std::mt19937_64 rng(7);
  std::vector<size_t> sizes;
  int64_t total = 0;
  while (total < 96 * kMiB) {
    size_t s;
    switch (rng() % 3) {
      case 0: s = 16 + rng() % 4096; break;
      case 1: s = 4096 + rng() % (90 * 1024); break;
      default: s = 96 * 1024 + rng() % (416 * 1024); break;
    }
    sizes.push_back(s);
    total += int64_t(s);
  }
  static void* blocks[1 << 16];  // not on the heap: only the blocks are scav's
  ASSERT_LT(sizes.size(), sizeof blocks / sizeof blocks[0]);
  int64_t base = stat("allocated");
  for (size_t i = 0; i < sizes.size(); i++) {
    blocks[i] = malloc(sizes[i]);
    memset(blocks[i], 0x5a, sizes[i]);
  }
  int64_t purged0 = stat("purged");
  for (size_t i = 0; i < sizes.size(); i++) free(blocks[i]);
  auto t0 = Clock::now();
  // From here on no allocator call: only stats (which do not allocate) and sleeps.
  // Back: all but what the large pages' hold keeps from the start, its floor of 4 MiB
  // touched (here in at most two partly used 4 MiB pages), purged a hold later.
  auto back = [&] { return stat("allocated") <= base + 2 * kMiB && stat("purge_pending") <= 8 * kMiB; };
  std::this_thread::sleep_for(std::chrono::milliseconds(delay / 2));
  int64_t early = stat("purged") - purged0;
  EXPECT_LT(early, total / 2) << "purged " << early / kMiB << " MiB of " << total / kMiB
                              << " MiB within half the delay";
  double done_ms = -1;
  while (ms_since(t0) < 4.0 * double(delay)) {
    if (back()) {
      done_ms = ms_since(t0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_GE(done_ms, 0) << "allocated " << stat("allocated") - base << " pending "
                        << stat("purge_pending");
  std::printf("back %.1f ms after the last free (delay %lld ms)\n", done_ms, (long long)delay);
  // One delay plus purge work; a heap delay followed by an arena delay would be two.
  EXPECT_LT(done_ms, 1.75 * double(delay)) << done_ms << " ms";
  EXPECT_GE(stat("purged") - purged0, total * 9 / 10);
  EXPECT_GE(stat("cache_steals"), 1);
}

}  // namespace
