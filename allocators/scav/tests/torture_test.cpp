// torture_test.cpp - everything at once, for the invariant checks to look at: 16
// threads allocating random sizes across all classes (and huge blocks) with every
// allocation call, cross-thread frees through shared slots, realloc chains, hand-offs,
// threads started, exiting and cancelled while handed off, forks, forced collects.
// Every block carries a pattern from its own seed, checked before it is freed or
// reallocated; alignment and usable size are checked on allocation. Smoke-sized in
// the suite (about a second); SCAVTEST_STRESS_SECONDS=600 runs it ten minutes by hand.
// Built against scav_static (Debug: invariants on) and, in the sanitizer builds,
// against scav_prefixed (see api.h).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "api.h"
#include "pattern.h"

// Under ThreadSanitizer: no fork (it does not support threads after a multi-threaded
// fork), and the short-lived threads end instead of being cancelled (a thread
// cancelled inside an intercepted blocking call keeps the interceptor's state, and
// TSan then ignores its synchronisation and reports races that are not there).
#if defined(__SANITIZE_THREAD__)
#define SCAV_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SCAV_TEST_TSAN 1
#endif
#endif

namespace {

#ifdef SCAV_TEST_TSAN
constexpr bool kCancel = false;
#else
constexpr bool kCancel = true;
#endif

double seconds() {
  const char* s = getenv("SCAVTEST_STRESS_SECONDS");
  return s && *s ? atof(s) : 1.0;
}

struct Item {
  unsigned char* p;
  size_t n;
  uint32_t seed;
};

void fill(const Item& it) { scav_test::pattern_fill(it.p, it.n, it.seed); }

bool intact(const Item& it, size_t upto) { return scav_test::pattern_intact(it.p, it.n, it.seed, upto); }

size_t random_size(std::mt19937_64& rng) {
  uint64_t r = rng();
  if (r % 64 == 0) return 512 * 1024 + (r >> 8) % (4 << 20);  // huge
  // A class at random (all 104 alike), then a size inside it.
  static const size_t bounds[] = {16, 128, 1024, 8192, 96 * 1024, 512 * 1024};
  unsigned band = unsigned((r >> 8) % 5);
  size_t lo = bounds[band], hi = bounds[band + 1];
  return lo / 2 + 1 + (r >> 16) % (hi - lo / 2);
}

struct World {
  std::vector<std::atomic<Item*>> slots = std::vector<std::atomic<Item*>>(4096);
  std::atomic<long> bad{0};
  std::atomic<long> ops{0};
  std::atomic<bool> stop{false};

  void release(Item* it) {
    if (!it) return;
    if (!intact(*it, it->n)) bad++;
    api::free(it->p);
    delete it;
  }
};

Item* make(World& w, std::mt19937_64& rng) {
  size_t n = random_size(rng);
  uint64_t r = rng();
  void* p = nullptr;
  size_t align = 16;
  switch (r % 6) {
    case 0: {
      p = api::calloc(1, n);
      if (p)
        for (size_t i = 0; i < n && i < 4096; i++)
          if (static_cast<unsigned char*>(p)[i]) {
            w.bad++;
            break;
          }
      break;
    }
    case 1:
      align = size_t(32) << ((r >> 8) % 12);  // 32 .. 64 KiB
      if (api::posix_memalign(&p, align, n)) p = nullptr;
      break;
    case 2:
      align = size_t(64) << ((r >> 8) % 8);
      p = api::aligned_alloc(align, (n + align - 1) & ~(align - 1));
      break;
    default:
      p = api::malloc(n);
  }
  if (!p) {
    w.bad++;
    return nullptr;
  }
  if (reinterpret_cast<uintptr_t>(p) % align != 0 || api::usable_size(p) < n) w.bad++;
  auto* it = new Item{static_cast<unsigned char*>(p), n, uint32_t(r >> 32)};
  fill(*it);
  return it;
}

// Grows or shrinks a block a few times; the common prefix must survive each move.
void realloc_chain(World& w, Item* it, std::mt19937_64& rng) {
  for (int k = 0; k < 4; k++) {
    size_t n = random_size(rng);
    auto* q = static_cast<unsigned char*>(api::realloc(it->p, n));
    if (!q) {
      w.bad++;
      return;
    }
    it->p = q;
    size_t keep = n < it->n ? n : it->n;
    if (!intact(*it, keep) || api::usable_size(q) < n) w.bad++;
    it->n = n;
    fill(*it);
  }
}

void worker(World& w, int id) {
  std::mt19937_64 rng(uint64_t(id) * 7919 + 17);
  std::vector<Item*> local;
  while (!w.stop.load(std::memory_order_relaxed)) {
    uint64_t r = rng() % 100;
    if (r < 45) {
      Item* it = make(w, rng);
      if (!it) continue;
      if (rng() % 2) local.push_back(it);
      else w.release(w.slots[rng() % w.slots.size()].exchange(it));  // a cross-thread free
    } else if (r < 80 && !local.empty()) {
      size_t k = rng() % local.size();
      w.release(local[k]);
      local[k] = local.back();
      local.pop_back();
    } else if (r < 90 && !local.empty()) {
      realloc_chain(w, local[rng() % local.size()], rng);
    } else if (r < 92) {
      scav_thread_idle_start();
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
      scav_thread_idle_end();
    } else if (local.size() > 64) {
      for (Item* it : local) w.release(it);
      local.clear();
    }
    w.ops++;
  }
  for (Item* it : local) w.release(it);
}

// A short-lived thread: allocates, hands some blocks to the shared slots, hands its
// heap off and blocks, until it is cancelled or told to end.
struct Ephemeral {
  World* w;
  uint64_t seed;
  std::atomic<bool> end{false};
};

void* ephemeral(void* arg) {
  auto* e = static_cast<Ephemeral*>(arg);
  std::mt19937_64 rng(e->seed);
  Item* mine[8];
  for (Item*& it : mine) it = make(*e->w, rng);
  for (int i = 0; i < 4; i++) {
    e->w->release(e->w->slots[rng() % e->w->slots.size()].exchange(mine[i]));
    mine[i] = nullptr;
  }
  for (int i = 4; i < 6; i++) {
    e->w->release(mine[i]);
    mine[i] = nullptr;
  }
  // Blocks 6 and 7 stay live in this heap across the hand-off; a cancelled thread
  // leaks them, as a cancelled thread leaks what it held.
  scav_thread_idle_start();
  while (!e->end.load()) {
    struct timespec ts = {0, 200000};
    nanosleep(&ts, nullptr);  // cancellation point while handed off
  }
  scav_thread_idle_end();
  for (Item* it : mine) e->w->release(it);
  return nullptr;
}

void spawner(World& w) {
  std::mt19937_64 rng(4242);
  while (!w.stop.load()) {
    Ephemeral e[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
      e[i].w = &w;
      e[i].seed = rng();
      pthread_create(&t[i], nullptr, ephemeral, &e[i]);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500 + rng() % 2000));
    for (int i = 0; i < 3; i++) {
      if (rng() % 2 && kCancel) pthread_cancel(t[i]);
      else e[i].end.store(true);
    }
    for (pthread_t& th : t) pthread_join(th, nullptr);
  }
}

void forker(World& w) {
#ifndef SCAV_TEST_TSAN
  std::mt19937_64 rng(99);
  while (!w.stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng() % 100));
    pid_t pid = fork();
    if (pid == 0) {
      // The child: one thread, heaps of threads it does not have. It allocates and
      // frees on its own and checks a few blocks it inherited.
      long bad = 0;
      for (int i = 0; i < 2000; i++) {
        size_t n = random_size(rng);
        auto* p = static_cast<unsigned char*>(api::malloc(n));
        if (!p) bad++;
        else {
          memset(p, 0x5a, n < 4096 ? n : 4096);
          api::free(p);
        }
      }
      scav_collect(true);
      _exit(bad ? 1 : 0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) w.bad++;
  }
#else
  (void)w;
#endif
}

TEST(Torture, EverythingAtOnce) {
  constexpr int kWorkers = 16;
  World w;
  std::vector<std::thread> ts;
  for (int i = 0; i < kWorkers; i++) ts.emplace_back(worker, std::ref(w), i);
  std::thread spawn(spawner, std::ref(w));
  std::thread fork_thread(forker, std::ref(w));
  std::thread collector([&] {
    while (!w.stop.load()) {
      scav_collect(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds());
  while (std::chrono::steady_clock::now() < end && w.bad.load() == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  w.stop.store(true);
  for (auto& t : ts) t.join();
  spawn.join();
  fork_thread.join();
  collector.join();
  for (auto& s : w.slots) w.release(s.exchange(nullptr));
  scav_collect(true);
  std::printf("torture: %ld operations in %.0f s, %ld failures\n", w.ops.load(), seconds(), w.bad.load());
  EXPECT_EQ(w.bad.load(), 0);
  EXPECT_GT(w.ops.load(), 1000);
}

}  // namespace
