// stress_test.cpp - threads that allocate, hand blocks to each other and free them on
// other threads, and fork while doing it. Smoke-sized by default; SCAVTEST_STRESS_LONG=1
// makes the runs a hundred times longer for hand runs.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "pattern.h"
#include "scav.h"
#include "test_util.h"

namespace {

long scale() {
  const char* s = getenv("SCAVTEST_STRESS_LONG");
  return s && *s == '1' ? 100 : 1;
}

// A block carries its size and a pattern derived from its address, checked on free.
void fill(unsigned char* p, size_t n) {
  if (n < 16) return;
  memcpy(p, &n, sizeof n);
  unsigned char v = (unsigned char)(reinterpret_cast<uintptr_t>(p) >> 4);
  memset(p + 8, v, n - 8 > 64 ? 64 : n - 8);
  p[n - 1] = v;
}

bool check(unsigned char* p) {
  size_t n;
  memcpy(&n, p, sizeof n);
  unsigned char v = (unsigned char)(reinterpret_cast<uintptr_t>(p) >> 4);
  for (size_t i = 8; i < (n - 8 > 64 ? 72 : n); i++)
    if (p[i] != v) return false;
  return p[n - 1] == v;
}

size_t random_size(std::mt19937_64& rng) {
  uint64_t r = rng();
  switch (r % 16) {
    case 0: return 16 + (r >> 8) % (600 * 1024);  // medium, large and some huge
    case 1: case 2: return 16 + (r >> 8) % 16384;
    default: return 16 + (r >> 8) % 1024;
  }
}

TEST(Stress, CrossThreadFrees) {
  constexpr int kThreads = 8;
  constexpr int kSlots = 4096;
  const long ops = 150000 * scale();
  std::vector<std::atomic<unsigned char*>> slots(kSlots);
  std::atomic<long> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; t++) {
    ts.emplace_back([&, t] {
      std::mt19937_64 rng(t * 7919 + 1);
      std::vector<unsigned char*> local;
      for (long i = 0; i < ops; i++) {
        size_t n = random_size(rng);
        auto* p = static_cast<unsigned char*>(malloc(n));
        if (!p) {
          bad++;
          continue;
        }
        fill(p, n);
        if (rng() % 4 == 0) {
          local.push_back(p);  // freed later by this thread
        } else {
          // Swap into a shared slot: whatever was there was made by some other thread.
          unsigned char* old = slots[rng() % kSlots].exchange(p);
          if (old) {
            if (!check(old)) bad++;
            free(old);
          }
        }
        if (local.size() > 256) {
          for (auto* q : local) {
            if (!check(q)) bad++;
            free(q);
          }
          local.clear();
        }
        if (i % 10000 == 0 && t == 0) scav_collect(false);
      }
      for (auto* q : local) {
        if (!check(q)) bad++;
        free(q);
      }
    });
  }
  for (auto& t : ts) t.join();
  for (auto& s : slots)
    if (unsigned char* p = s.exchange(nullptr)) {
      if (!check(p)) bad++;
      free(p);
    }
  EXPECT_EQ(bad.load(), 0);
  scav_collect(true);
  // With everything freed and collected, only small current pages of other (exited)
  // heaps' leftovers may remain; the live figure must be far below the peak.
  EXPECT_LT(scav_test::stat("allocated"), 64 * scav_test::kMiB);
}

// What the producer writes in each block: its sequence number and size, then a pattern
// seeded with the sequence number over the rest.
struct Sent {
  uint64_t seq;
  uint64_t size;
};

void send_fill(unsigned char* p, uint64_t seq, size_t n) {
  const Sent head{seq, n};
  memcpy(p, &head, sizeof head);
  scav_test::pattern_fill(p + sizeof head, n - sizeof head, uint32_t(seq));
}

// Whether p is block number `seq` as the producer wrote it (its size within [lo, hi]).
bool send_intact(const unsigned char* p, uint64_t seq, size_t lo, size_t hi) {
  Sent head;
  memcpy(&head, p, sizeof head);
  if (head.seq != seq || head.size < lo || head.size > hi) return false;
  if (malloc_usable_size(const_cast<unsigned char*>(p)) < head.size) return false;
  return scav_test::pattern_intact(p + sizeof head, head.size - sizeof head, uint32_t(seq),
                                   head.size - sizeof head);
}

TEST(Stress, ProducerConsumer) {
  // One thread allocates, another frees: every free is remote. The blocks go through
  // the ring in order, so the consumer knows which one comes next.
  constexpr int kRing = 1024;
  constexpr size_t kMin = sizeof(Sent), kMax = kMin + 1999;
  const long n = 300000 * scale();
  std::vector<std::atomic<unsigned char*>> ring(kRing);
  // What the heaps hold before: once the consumer freed every block and the producer
  // collected, they hold no more (but a few pages, for blocks others made meanwhile).
  scav_collect(true);
  const int64_t allocated_before = scav_test::stat("allocated");
  // Blocks and bytes the consumer found as the producer wrote them.
  std::atomic<long> consumed{0}, consumed_bytes{0}, bad{0}, first_bad{-1};
  std::thread consumer([&] {
    for (long i = 0; i < n; i++) {
      std::atomic<unsigned char*>& at = ring[i % kRing];
      unsigned char* p;
      while (!(p = at.exchange(nullptr, std::memory_order_acquire))) std::this_thread::yield();
      if (send_intact(p, uint64_t(i), kMin, kMax)) {
        consumed.fetch_add(1, std::memory_order_relaxed);
        consumed_bytes.fetch_add(long(reinterpret_cast<const Sent*>(p)->size), std::memory_order_relaxed);
      } else if (bad.fetch_add(1) == 0) {
        first_bad = i;
      }
      free(p);
    }
  });
  std::mt19937_64 rng(5);
  long produced = 0, produced_bytes = 0;
  for (long i = 0; i < n; i++) {
    const size_t size = kMin + rng() % (kMax - kMin + 1);
    auto* p = static_cast<unsigned char*>(malloc(size));
    if (!p) {  // the consumer waits for every block: no way out but this
      fprintf(stderr, "malloc(%zu) failed at block %ld\n", size, i);
      std::abort();
    }
    send_fill(p, uint64_t(i), size);
    std::atomic<unsigned char*>& at = ring[i % kRing];
    while (at.load(std::memory_order_acquire) != nullptr) std::this_thread::yield();
    at.store(p, std::memory_order_release);
    produced++;
    produced_bytes += long(size);
  }
  consumer.join();
  EXPECT_EQ(bad.load(), 0) << "first broken block: " << first_bad.load();
  EXPECT_EQ(consumed.load(), produced);
  EXPECT_EQ(consumed_bytes.load(), produced_bytes);
  for (auto& at : ring) EXPECT_EQ(at.load(), nullptr);
  // Every block went back as a remote free into the producer's pages: collected here,
  // those pages are empty and leave the heap.
  scav_collect(true);
  EXPECT_LE(scav_test::stat("allocated"), allocated_before + 4 * 64 * 1024)
      << "before: " << allocated_before;
}

// Threads cycle blocks through their cache slots (one and two live blocks of a few
// classes) while another thread forces passes that take every cached page: a block
// handed to two owners, or a page purged under a live block, shows as a broken pattern.
TEST(Stress, CacheStealsWhileCycling) {
  constexpr int kThreads = 3;
  const long rounds = 200000 * scale();
  std::atomic<long> bad{0};
  std::atomic<bool> stop{false};
  std::thread collector([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      scav_collect(true);
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; t++) {
    ts.emplace_back([&, t] {
      const size_t sizes[] = {100, 4096, 40000, 128 * 1024, 300000};
      std::mt19937_64 rng(t + 11);
      for (long i = 0; i < rounds; i++) {
        size_t n = sizes[rng() % 5];
        auto* a = static_cast<unsigned char*>(malloc(n));
        fill(a, n);
        unsigned char* b = nullptr;
        if (rng() % 3 == 0) {
          b = static_cast<unsigned char*>(malloc(n));
          fill(b, n);
        }
        if (!check(a)) bad++;
        free(a);
        if (b) {
          if (!check(b)) bad++;
          free(b);
        }
      }
    });
  }
  for (auto& t : ts) t.join();
  stop = true;
  collector.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(scav_test::stat("cache_steals"), 0);
}

TEST(Fork, WhileOtherThreadsAllocate) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++)
    ts.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      std::vector<void*> v(512, nullptr);
      while (!stop.load(std::memory_order_relaxed)) {
        size_t i = rng() % v.size();
        free(v[i]);
        v[i] = malloc(16 + rng() % (rng() % 8 == 0 ? 300000 : 2000));
        if (rng() % 64 == 0) scav_collect(rng() % 2);
      }
      for (void* p : v) free(p);
    });
  const int forks = 20 * int(scale());
  for (int i = 0; i < forks; i++) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // The child has only this thread. It must be able to allocate, free, collect
      // (no lock left held) and run a new thread.
      std::vector<void*> v;
      for (int k = 0; k < 2000; k++) v.push_back(malloc(16 + k * 37 % 5000));
      for (void* p : v) free(p);
      void* big = malloc(8 << 20);
      memset(big, 1, 8 << 20);
      free(big);
      scav_collect(true);
      std::thread t([] { free(malloc(1000)); });
      t.join();
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "child " << i << " status " << status;
    ASSERT_EQ(WEXITSTATUS(status), 0);
  }
  stop = true;
  for (auto& t : ts) t.join();
}

}  // namespace
