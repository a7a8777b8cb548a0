// inline_test.cpp - SCAV_SCAVENGER=0 (set by ctest for this binary): no thread, purges
// happen inline on slow paths and in scav_collect.
#include <gtest/gtest.h>
#include <dirent.h>
#include <malloc.h>

#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "scav.h"
#include "test_util.h"

using scav_test::kMiB;
using scav_test::stat;

namespace {

int thread_count() {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

TEST(NoScavenger, PurgesInlineAndInCollect) {
  ASSERT_STREQ(getenv("SCAV_SCAVENGER"), "0");
  std::vector<void*> v;
  for (int i = 0; i < 256; i++) {
    void* p = malloc(256 * 1024);
    memset(p, 1, 256 * 1024);
    v.push_back(p);
  }
  int64_t purged0 = stat("purged");
  for (void* p : v) free(p);
  // A free's slow path may purge inline what fell due while the loop ran (on a slow
  // machine, a page freed at its start), so the idle check starts after the loop.
  int64_t freed_purged = stat("purged");
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  // Nothing ran in the background (read before anything allocates: any slow path,
  // opendir's buffer included, would purge inline)...
  int64_t idle_purged = stat("purged");
  EXPECT_EQ(idle_purged, freed_purged);
  EXPECT_EQ(stat("scavenger_started"), 0);
  EXPECT_EQ(thread_count(), 1);
  // ...a slow path does what is due (all but the page parked in the cache).
  scav_collect(false);
  EXPECT_GE(stat("purged") - purged0, 56 * kMiB);
  scav_collect(true);
  EXPECT_GE(stat("purged") - purged0, 64 * kMiB);
  EXPECT_EQ(stat("purge_pending"), 0);
  EXPECT_EQ(thread_count(), 1);
}

TEST(NoScavenger, SlowPathPurgesWhenDue) {
  std::vector<void*> v;
  for (int i = 0; i < 128; i++) v.push_back(malloc(256 * 1024));
  int64_t purged0 = stat("purged");
  for (void* p : v) free(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  // A slow path: a fresh huge allocation.
  void* h = malloc(4 * kMiB);
  free(h);
  // All but the page parked in the cache and one the large pages' hold keeps from
  // the start (its floor, 4 MiB of touched bytes).
  EXPECT_GE(stat("purged") - purged0, 24 * kMiB);
}

TEST(NoScavenger, ForcedPurgeDoesNotRaiseTheHold) {
  // Without a scavenger nothing is purged by schedule between the free and the
  // collect, so the purge is the forced one for certain.
  constexpr size_t kSize = 256 * 1024;  // blocks of 4 MiB pages
  static void* blocks[8];
  auto fill = [] {
    for (auto& b : blocks) {
      b = malloc(kSize);
      memset(b, 0x6b, kSize);
    }
  };
  fill();
  for (auto& b : blocks) free(b);
  int64_t purged0 = stat("purged");
  scav_collect(true);
  ASSERT_GE(stat("purged") - purged0, 2 * kMiB);
  fill();  // on the slices just purged
  EXPECT_EQ(stat("purge_refaults"), 0);
  EXPECT_EQ(stat("purge_hold_ms"), 0);
  for (auto& b : blocks) free(b);
}

}  // namespace
