// hold_test.cpp - the hold (README, "The hold"): a page taken again soon after its
// scheduled purge lengthens the delay to purge_delay_ms + purge_hold_max_ms; a reuse
// later than the longest hold would cover leaves it alone; held memory is still
// purged; and the huge cache learns a hold of its own. (A forced purge does not count either: inline_test, where no scavenger can
// purge by schedule in between.) ctest runs it with SCAV_PURGE_HOLD_MAX_MS=1500, so
// that the plain delay (100 ms) and the held one (1600 ms) are far apart on a loaded
// machine.
// Each test runs in its own process (gtest_discover_tests), so each starts at hold 0.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "scav.h"
#include "test_util.h"

using scav_test::kMiB;
using scav_test::stat;
using scav_test::wait_for;

namespace {

constexpr int64_t kDelayMs = 100;
constexpr int64_t kHoldMs = 1500;
constexpr int kBlocks = 8;
constexpr size_t kBlockSize = 256 * 1024;  // blocks of 4 MiB pages
constexpr int64_t kBytes = kBlocks * int64_t(kBlockSize);
void* g_blocks[kBlocks];  // not on the heap: only the blocks are scav's

void allocate_and_touch() {
  for (auto& b : g_blocks) {
    b = malloc(kBlockSize);
    ASSERT_NE(b, nullptr);
    memset(b, 0x6b, kBlockSize);
  }
}

void free_all() {
  for (auto& b : g_blocks) free(b);
}

// Frees the blocks and waits for a scheduled pass to purge them.
void free_and_wait_for_the_purge() {
  int64_t purged0 = stat("purged");
  free_all();
  ASSERT_TRUE(wait_for([&] { return stat("purged") - purged0 >= kBytes; }, 3000))
      << "purged " << stat("purged") - purged0 << " of " << kBytes;
}

TEST(Hold, PageTakenSoonAfterItsPurgeRaisesTheHold) {
  ASSERT_EQ(stat("purge_delay_ms"), kDelayMs);
  ASSERT_EQ(stat("purge_hold_ms"), 0);
  allocate_and_touch();
  free_and_wait_for_the_purge();
  allocate_and_touch();  // well within kHoldMs of the purge
  EXPECT_GE(stat("purge_refaults"), 1);
  EXPECT_EQ(stat("purge_hold_ms"), kHoldMs);

  // Freed again: not purged at the plain delay, but by the held one.
  int64_t purged0 = stat("purged");
  free_all();
  auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * kDelayMs));
  EXPECT_LT(stat("purged") - purged0, kBytes / 2) << "purged at twice the plain delay";
  ASSERT_TRUE(wait_for([&] { return stat("purged") - purged0 >= kBytes; }, 4 * (kDelayMs + kHoldMs)));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("held memory purged %.0f ms after its free\n", ms);
  EXPECT_GE(ms, double(kHoldMs));
}

TEST(Hold, ReuseLaterThanTheLongestHoldDoesNotCount) {
  allocate_and_touch();
  free_and_wait_for_the_purge();
  std::this_thread::sleep_for(std::chrono::milliseconds(kHoldMs + 200));
  allocate_and_touch();
  EXPECT_EQ(stat("purge_refaults"), 0);
  EXPECT_EQ(stat("purge_hold_ms"), 0);
  free_all();
}

// The hold keeps pages in proportion to what came back: one small refault raises
// it, but a large heap freed afterwards is purged at the plain delay, all but the
// budget (twice the refaulted bytes, at least 4 MiB). Without the budget all of it
// would wait the full hold (the test fails so on the code before the budget).
TEST(Hold, ASmallRefaultHoldsOnlyItsBudget) {
  allocate_and_touch();
  free_and_wait_for_the_purge();
  allocate_and_touch();  // 2 MiB of blocks: one 4 MiB page taken again on purged slices
  ASSERT_EQ(stat("purge_hold_ms"), kHoldMs);
  EXPECT_EQ(stat("hold_refault_bytes"), int64_t(4 * kMiB));
  const int64_t budget = stat("hold_budget_bytes");
  EXPECT_EQ(budget, int64_t(8 * kMiB));  // twice what came back

  constexpr int kLarge = 256;  // 64 MiB in blocks of 4 MiB pages
  static void* large[kLarge];
  for (auto& b : large) {
    b = malloc(kBlockSize);
    ASSERT_NE(b, nullptr);
    memset(b, 0x5a, kBlockSize);
  }
  const int64_t purged0 = stat("purged");
  auto t0 = std::chrono::steady_clock::now();
  for (auto& b : large) free(b);
  const int64_t want = kLarge * int64_t(kBlockSize) - budget - int64_t(4 * kMiB);  // one page's slack
  ASSERT_TRUE(wait_for([&] { return stat("purged") - purged0 >= want; }, kHoldMs - 300))
      << "purged " << stat("purged") - purged0 << " of " << want << " within the hold";
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("64 MiB purged %.0f ms after the free, with a hold of %lld ms\n", ms, (long long)kHoldMs);
  EXPECT_LE(stat("hold_kept_bytes"), budget);
  free_all();
}

// The huge cache learns its own hold: a mapping made where one it dropped on its
// deadline would have served.
TEST(Hold, HugeCacheHasItsOwnHold) {
  constexpr size_t kHuge = 2 * kMiB;  // above 512 KiB: a direct mapping
  auto make = [&] {
    void* p = malloc(kHuge);
    memset(p, 0x6b, kHuge);
    return p;
  };
  void* p = make();
  free(p);
  ASSERT_GT(stat("huge_cached"), 0);
  ASSERT_TRUE(wait_for([] { return stat("huge_cached") == 0; }, 3000)) << "the cache kept it";
  EXPECT_EQ(stat("huge_hold_ms"), 0);
  p = make();  // a fresh mapping where the dropped one would have done
  EXPECT_EQ(stat("huge_hold_ms"), kHoldMs);
  EXPECT_EQ(stat("purge_hold_ms"), 0);  // the arena's is apart
  free(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * kDelayMs));
  EXPECT_GT(stat("huge_cached"), 0) << "dropped at twice the plain delay";
  EXPECT_TRUE(wait_for([] { return stat("huge_cached") == 0; }, 4 * (kDelayMs + kHoldMs)));
}

}  // namespace
