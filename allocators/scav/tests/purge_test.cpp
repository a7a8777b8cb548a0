// purge_test.cpp - the purge schedule and the scavenger, observed through the stats
// counters: the two scenarios of seed 003 (a free during a pass; a forced collect during
// a pass), the scavenger thread itself, and the idle hand-off (seed 004). Each test is
// its own process under ctest (gtest_discover_tests), so counters start fresh.
#include <gtest/gtest.h>
#include <dirent.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "scav.h"
#include "test_util.h"

using scav_test::kMiB;
using scav_test::stat;
using scav_test::wait_for;

namespace {

constexpr size_t kBlock = 256 * 1024;  // lives in 4 MiB large pages of the arena

std::vector<void*> alloc_touched(int64_t bytes) {
  std::vector<void*> v;
  v.reserve(size_t(bytes / int64_t(kBlock)));
  for (int64_t b = 0; b < bytes; b += kBlock) {
    void* p = malloc(kBlock);
    memset(p, 0x5a, kBlock);
    v.push_back(p);
  }
  return v;
}

// Names of this process's threads.
std::vector<std::string> thread_names() {
  std::vector<std::string> out;
  DIR* d = opendir("/proc/self/task");
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string s;
    std::getline(f, s);
    out.push_back(s);
  }
  closedir(d);
  return out;
}

std::string scavenger_status_line(const char* key) {
  DIR* d = opendir("/proc/self/task");
  std::string found;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string dir = std::string("/proc/self/task/") + e->d_name;
    std::ifstream c(dir + "/comm");
    std::string name;
    std::getline(c, name);
    if (name != "scav-scavenger") continue;
    std::ifstream st(dir + "/status");
    std::string line;
    while (std::getline(st, line))
      if (line.rfind(key, 0) == 0) found = line;
  }
  closedir(d);
  return found;
}

// Seed 003, first bug: memory freed while a pass runs must be purged by a later pass
// with no further trigger (no collect, no allocation, no idle call).
TEST(Purge, FreeDuringPassIsPurgedByALaterPass) {
  auto first = alloc_touched(256 * kMiB);
  auto second = alloc_touched(64 * kMiB);
  int64_t purged0 = stat("purged");
  int64_t passes0 = stat("purge_passes");
  for (void* p : first) free(p);
  // Wait for the scavenger to be in (or through) a pass, then free more behind it.
  ASSERT_TRUE(wait_for([&] { return stat("purge_passes") > passes0; }, 5000));
  for (void* p : second) free(p);
  bool ok = wait_for([&] { return stat("purged") - purged0 >= 320 * kMiB; }, 5000);
  EXPECT_TRUE(ok) << "purged " << (stat("purged") - purged0) / kMiB << " of 320 MiB";
  EXPECT_EQ(stat("purge_pending"), 0);
}

// Seed 003, second bug: scav_collect(true) while the scavenger is in a pass must wait
// for it and return with everything purged.
TEST(Purge, ForcedCollectDuringPassPurgesEverything) {
  auto blocks = alloc_touched(256 * kMiB);
  int64_t purged0 = stat("purged");
  int64_t passes0 = stat("purge_passes");
  for (void* p : blocks) free(p);
  ASSERT_TRUE(wait_for([&] { return stat("purge_passes") > passes0; }, 5000));
  scav_collect(true);
  int64_t got = stat("purged") - purged0;
  EXPECT_GE(got, 256 * kMiB) << "purged " << got / kMiB << " of 256 MiB";
  EXPECT_EQ(stat("purge_pending"), 0);
}

TEST(Purge, ForcedCollectWithoutWaiting) {
  auto blocks = alloc_touched(64 * kMiB);
  int64_t purged0 = stat("purged");
  for (void* p : blocks) free(p);
  scav_collect(true);  // immediately: nothing is due yet, force purges it all
  EXPECT_GE(stat("purged") - purged0, 64 * kMiB);
  EXPECT_LT(stat("allocated"), 16 * kMiB);
}

// A single-threaded program that frees and then sleeps gets its memory back.
TEST(Purge, SleepingProgramGetsMemoryBack) {
  auto blocks = alloc_touched(100 * kMiB);
  int64_t purged0 = stat("purged");
  for (void* p : blocks) free(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_GE(stat("purged") - purged0, 100 * kMiB);
  EXPECT_GE(stat("scavenger_started"), 1);
}

TEST(Purge, HugeCacheIsPurgedAfterTheDelay) {
  int64_t purged0 = stat("purged");
  for (int i = 0; i < 8; i++) {
    void* p = malloc(3 * kMiB);
    memset(p, 1, 3 * kMiB);
    free(p);  // reused from the cache by the next round
  }
  EXPECT_GT(stat("huge_cached"), 0);
  ASSERT_TRUE(wait_for([] { return stat("huge_cached") == 0; }, 3000));
  EXPECT_GE(stat("purged") - purged0, 3 * kMiB);
}

TEST(Scavenger, IsNamedAndBlocksSignals) {
  void* p = malloc(kBlock);
  free(p);  // retires a large page: schedules a purge, which starts the scavenger
  ASSERT_TRUE(wait_for([] {
    for (auto& n : thread_names())
      if (n == "scav-scavenger") return true;
    return false;
  }, 2000));
  std::string blk = scavenger_status_line("SigBlk:");
  ASSERT_FALSE(blk.empty());
  // Every signal blocked but SIGKILL and SIGSTOP, which the kernel never blocks, and
  // glibc's two internal ones (32: cancellation, 33: the setxid broadcast that makes
  // setuid reach every thread), which pthread_create keeps deliverable.
  unsigned long long mask = strtoull(blk.c_str() + 7, nullptr, 16);
  unsigned long long want = ~0ull & ~(1ull << (SIGKILL - 1)) & ~(1ull << (SIGSTOP - 1)) &
                            ~(1ull << (32 - 1)) & ~(1ull << (33 - 1));
  EXPECT_EQ(mask, want) << blk;
}

TEST(Scavenger, BurstOfFreesCostsFewWakes) {
  auto blocks = alloc_touched(64 * kMiB);
  // Let the scavenger settle.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int64_t wakes0 = stat("scavenger_wakes");
  for (void* p : blocks) free(p);  // 256 frees, 16 pages
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  int64_t wakes = stat("scavenger_wakes") - wakes0;
  // A pass per deadline, a few deadlines: nowhere near one wake per free.
  EXPECT_LE(wakes, 12) << wakes;
}

// Seed 004: an event loop that idles at ~1 kHz must not wake the scavenger per turn.
TEST(Idle, KilohertzHandOffDoesNotWakeTheScavengerPerTurn) {
  void* warm = malloc(kBlock);
  free(warm);
  ASSERT_TRUE(wait_for([] { return stat("scavenger_started") >= 1; }, 2000));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int64_t wakes0 = stat("scavenger_wakes");
  for (int turn = 0; turn < 500; turn++) {
    void* p = malloc(100 + turn % 64);  // a little work per turn
    free(p);
    scav_thread_idle_start();
    std::this_thread::sleep_for(std::chrono::microseconds(1000));
    scav_thread_idle_end();
  }
  int64_t wakes = stat("scavenger_wakes") - wakes0;
  EXPECT_LE(wakes, 125) << wakes;
  EXPECT_GE(stat("idle_handoffs"), 500);
}

// While a thread is idle the scavenger takes its empty pages, small ones included.
TEST(Idle, ScavengerTakesAnIdleThreadsEmptyPages) {
  std::atomic<int> phase{0};
  static void* v[64 * 1024];  // not on the heap: only the blocks are scav's
  int64_t base = stat("allocated");
  std::thread worker([&] {
    for (auto& p : v) p = malloc(1000);  // 64 MiB of small blocks
    for (auto& p : v) free(p);
    phase = 1;
    scav_thread_idle_start();
    while (phase.load() != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    scav_thread_idle_end();
    void* p = malloc(1000);  // the heap is usable again
    free(p);
  });
  while (phase.load() != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Everything the worker freed goes back: nothing in use beyond this thread's bits.
  bool ok = wait_for([&] { return stat("allocated") <= base + kMiB && stat("purge_pending") == 0; }, 3000);
  EXPECT_TRUE(ok) << "allocated " << stat("allocated") << " pending " << stat("purge_pending");
  phase = 2;
  worker.join();
}

// Resident bytes of this process (statm), without allocating.
int64_t resident_bytes() {
  char buf[128];
  FILE* f = fopen("/proc/self/statm", "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  buf[n] = 0;
  long size = 0, resident = 0;
  if (sscanf(buf, "%ld %ld", &size, &resident) != 2) return -1;
  return int64_t(resident) * sysconf(_SC_PAGESIZE);
}

// Seed 000's pool: a worker reads buffers of 256 KiB, keeps 1 in 12, parks with a
// hand-off; another thread frees the rest. Every 4 MiB page keeps a live block, so no
// page can go back whole: the scavenger purges inside the free blocks of the parked
// worker's pages, and the kept blocks are untouched.
TEST(Idle, ScavengerPurgesFreeBlocksInsideAnIdleThreadsPages) {
  constexpr int kBlocks = 192;  // 48 MiB, 12 pages of 16 blocks
  constexpr size_t kSize = 256 * 1024;
  static void* v[kBlocks];
  std::atomic<int> phase{0};
  std::thread worker([&] {
    for (int i = 0; i < kBlocks; i++) {
      v[i] = malloc(kSize);
      memset(v[i], i & 0xff, kSize);
    }
    phase = 1;
    scav_thread_idle_start();
    while (phase.load() != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    scav_thread_idle_end();
    // The purged blocks are usable again.
    std::vector<void*> again;
    for (int i = 0; i < 16; i++) {
      again.push_back(malloc(kSize));
      memset(again.back(), 0x5a, kSize);
    }
    for (void* p : again) free(p);
  });
  while (phase.load() != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  int64_t interiors0 = stat("interiors_purged");
  int64_t rss0 = resident_bytes();
  int freed = 0;
  for (int i = 0; i < kBlocks; i++)
    if (i % 12 != 0) {
      free(v[i]);  // a remote free into the parked worker's pages
      freed++;
    }
  const int64_t want = int64_t(freed) * int64_t(kSize - 4096) * 9 / 10;
  bool ok = wait_for([&] { return stat("interiors_purged") - interiors0 >= want; }, 3000);
  EXPECT_TRUE(ok) << "purged inside free blocks: " << stat("interiors_purged") - interiors0 << " of " << want;
  EXPECT_GE(rss0 - resident_bytes(), want * 9 / 10) << "RSS " << rss0 << " -> " << resident_bytes();
  for (int i = 0; i < kBlocks; i += 12) {
    auto* b = static_cast<unsigned char*>(v[i]);
    EXPECT_EQ(b[0], i & 0xff);
    EXPECT_EQ(b[kSize / 2], i & 0xff);
    EXPECT_EQ(b[kSize - 1], i & 0xff);
  }
  phase = 2;
  worker.join();
  for (int i = 0; i < kBlocks; i += 12) free(v[i]);
}

// A thread that frees its last 128 KiB buffer parks it in its cache and then sleeps
// without a hand-off: the scavenger takes the cached page itself.
TEST(Cache, SleepingThreadsCachedPageIsTaken) {
  std::atomic<int> phase{0};
  int64_t steals0 = stat("cache_steals");
  std::thread worker([&] {
    char* p = static_cast<char*>(malloc(128 * 1024));
    memset(p, 1, 128 * 1024);
    free(p);  // the page's last block: into the cache
    phase = 1;
    while (phase.load() != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    p = static_cast<char*>(malloc(128 * 1024));  // still works after the steal
    memset(p, 2, 128 * 1024);
    free(p);
  });
  while (phase.load() != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  bool ok = wait_for([&] { return stat("cache_steals") > steals0; }, 3000);
  EXPECT_TRUE(ok);
  phase = 2;
  worker.join();
}

// A thread that keeps cycling one buffer keeps its cached page: the scavenger looks
// (one visit per delay) but takes it only if the thread stops for an eighth of the
// delay, which a descheduled thread on a loaded machine may do now and then.
TEST(Cache, HotBlockStaysWithItsThread) {
  void* warm = malloc(128 * 1024);
  free(warm);
  ASSERT_TRUE(wait_for([] { return stat("scavenger_started") >= 1; }, 2000));
  scav_collect(true);  // no other cached page left to be taken while we count
  int64_t steals0 = stat("cache_steals");
  int64_t wakes0 = stat("scavenger_wakes");
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1000);
  long n = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 1000; i++, n++) {
      char* p = static_cast<char*>(malloc(128 * 1024));
      p[n % (128 * 1024)] = 1;
      free(p);
    }
  }
  int64_t steals = stat("cache_steals") - steals0;
  int64_t wakes = stat("scavenger_wakes") - wakes0;
  EXPECT_LE(steals, 5) << steals << " steals in " << n << " cycles";
  EXPECT_LE(wakes, 40) << wakes;
}

// An event loop that turns every millisecond, cycling a few small blocks through its
// cache and handing off around each wait (timer-turns): its slots are in steady use, so
// after the first look the scavenger comes about once per delay, not twice (an eighth
// of the delay after each marking look), and takes none of them. 12-13 wakes in a
// second at the default delay of 100 ms; 19-20 when every marking look was rechecked.
TEST(Idle, CyclingLoopWithHandOffsWakesTheScavengerOncePerDelay) {
  void* warm = malloc(64);
  free(warm);
  ASSERT_TRUE(wait_for([] { return stat("scavenger_started") >= 1; }, 2000));
  scav_collect(true);  // nothing else scheduled while we count
  int64_t wakes0 = stat("scavenger_wakes");
  int64_t steals0 = stat("cache_steals");
  constexpr size_t kSizes[] = {48, 200, 1000, 3000};
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1000);
  long turns = 0;
  while (std::chrono::steady_clock::now() < end) {
    void* live[4];
    for (int i = 0; i < 4; i++) {
      live[i] = malloc(kSizes[i]);
      memset(live[i], turns & 0xff, kSizes[i]);
    }
    for (void* p : live) free(p);  // each the last block of its page: into the cache
    scav_thread_idle_start();
    std::this_thread::sleep_for(std::chrono::microseconds(1000));
    scav_thread_idle_end();
    turns++;
  }
  int64_t wakes = stat("scavenger_wakes") - wakes0;
  int64_t steals = stat("cache_steals") - steals0;
  EXPECT_LE(wakes, 16) << wakes << " wakes in " << turns << " turns";
  EXPECT_LE(steals, 4) << steals << " steals in " << turns << " turns";
}

// A thread's exit returns its heap: empty pages go back and get purged.
TEST(Idle, ThreadExitReturnsPages) {
  int64_t purged0 = stat("purged");
  std::thread t([] {
    std::vector<void*> v;
    for (int i = 0; i < 32 * 1024; i++) v.push_back(malloc(1000));
    for (void* p : v) free(p);
  });
  t.join();
  ASSERT_TRUE(wait_for([&] { return stat("purged") - purged0 >= 30 * kMiB; }, 3000))
      << (stat("purged") - purged0) / kMiB;
}

// A thread that frees a running thread's small blocks gathers them per page and
// pushes each run with one CAS (remote_batched counts those blocks); when it parks
// or exits, what it still holds has reached the owner, whose collect then gives
// every page back. 4000 blocks of 64 B: four pages, the last run of 32 blocks not
// a full batch. `allocated` is read once the owner has its heap and a forced
// collect has taken the cached pages. A freeing thread that has not allocated
// before (a consumer) gathers too, without a heap: its exit pushes what it holds.
void remote_frees_reach_the_owner(bool park, bool freer_allocates = true) {
  static void* v[4000];
  std::atomic<int> owner_step{0}, freer_step{0};
  auto wait_step = [](std::atomic<int>& step, int want) {
    while (step.load() < want) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  std::thread owner([&] {
    wait_step(owner_step, 1);
    for (auto& p : v) p = malloc(64);
    owner_step = 2;
    wait_step(owner_step, 3);
    malloc_trim(0);  // collects this heap's remote frees and gives its empty pages back
  });
  std::thread freer([&] {
    if (freer_allocates) free(malloc(16));  // a heap of its own, which gathers
    freer_step = 1;
    wait_step(freer_step, 2);
    for (auto* p : v) free(p);
    if (park) scav_thread_idle_start();
    freer_step = 3;
    if (!park) return;
    wait_step(freer_step, 4);
    scav_thread_idle_end();
  });
  wait_step(freer_step, 1);
  malloc_trim(0);  // every cached page goes now, not in the middle
  const int64_t base = stat("allocated"), batched0 = stat("remote_batched");
  owner_step = 1;
  wait_step(owner_step, 2);
  freer_step = 2;
  wait_step(freer_step, 3);
  if (!park) freer.join();
  owner_step = 3;
  owner.join();
  EXPECT_GE(stat("remote_batched") - batched0, 3900) << "frees into one page were pushed one by one";
  EXPECT_LE(stat("allocated"), base + 32 * 1024) << "blocks the freeing thread gathered did not reach their owner";
  freer_step = 4;
  if (park) freer.join();
}

TEST(Remote, GatheredFreesReachTheOwnerWhenTheFreeingThreadParks) { remote_frees_reach_the_owner(true); }

TEST(Remote, GatheredFreesReachTheOwnerWhenTheFreeingThreadExits) { remote_frees_reach_the_owner(false); }

TEST(Remote, AThreadThatOnlyFreesGathersAndItsFreesReachTheOwner) {
  remote_frees_reach_the_owner(true, false);
  remote_frees_reach_the_owner(false, false);
}

}  // namespace
