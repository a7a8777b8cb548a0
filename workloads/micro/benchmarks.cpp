// The benchmark bodies (see benchmarks.h). Each iteration is one allocator
// operation pair, or one batch or round where a benchmark says so; pointers go through benchmark::DoNotOptimize so that the
// compiler cannot drop a malloc/free pair. Google Benchmark runs each body on its
// own thread(s); the rings of producer_consumer and batch_handoff_64b are each
// shared by exactly two threads. The three shape benchmarks (batch_handoff_64b,
// live_set_10k_8b_4k, larson_2t_8b_1000b) have their parameters fixed here, at
// most 2 threads: on 2 cores more would measure the scheduler.
#include "benchmarks.h"

#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace micro {

namespace {

// The CPUs the process may run on, read once before any thread is pinned; empty
// when the benchmarks are not pinned.
std::vector<int> g_pin_cpus;

// With pinning, benchmark thread i runs on the i-th allowed CPU (modulo their
// number) for the whole run, and the threads it starts inherit that CPU: a thread
// that migrates mid-repetition leaves its cache behind, which on a 2-core machine
// is much of a run's scatter.
void pin(const benchmark::State& state) {
  if (g_pin_cpus.empty()) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(g_pin_cpus[static_cast<size_t>(state.thread_index()) % g_pin_cpus.size()], &one);
  pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

std::mutex g_ran_on_mutex;
std::map<std::string, std::vector<micro::RanOn>> g_ran_on;

// Notes the CPU the calling benchmark thread is on and how many it may run on.
void note_ran_on(const benchmark::State& state, const char* name) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const micro::RanOn here{sched_getcpu(),
                          pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : -1};
  const auto i = static_cast<size_t>(state.thread_index());
  const std::lock_guard<std::mutex> lock(g_ran_on_mutex);
  auto& threads = g_ran_on[name];
  if (threads.size() <= i) threads.resize(i + 1);
  threads[i] = here;
}

// Pins the benchmark thread (when asked) before its timed loop, and notes the CPU
// it is on once the loop is over and how many it may run on, by benchmark and
// thread index.
class Pinned {
 public:
  Pinned(const benchmark::State& state, const char* name) : state_(state), name_(name) { pin(state); }
  ~Pinned() { note_ran_on(state_, name_); }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;

 private:
  const benchmark::State& state_;
  const char* name_;
};

// A live set of blocks whose members are replaced at random: free one, malloc a
// new size in its place. The draws of (member, size) are made before the clock
// starts, so that the random number generator is not what is measured; they are
// cycled through (2^16 of them).
class LiveSet {
 public:
  LiveSet(size_t live, uint32_t min_size, uint32_t max_size, uint64_t seed)
      : slot_(kDraws), size_(kDraws), live_(live) {
    std::mt19937_64 rng(seed);
    for (size_t i = 0; i < kDraws; ++i) {
      slot_[i] = static_cast<uint32_t>(rng() % live);
      size_[i] = min_size + static_cast<uint32_t>(rng() % (max_size - min_size + 1));
    }
    for (size_t i = 0; i < live; ++i) live_[i] = std::malloc(size_[i]);
  }
  ~LiveSet() {
    for (auto* p : live_) std::free(p);
  }
  LiveSet(const LiveSet&) = delete;
  LiveSet& operator=(const LiveSet&) = delete;

  void replace(size_t count) {
    for (size_t end = next_ + count; next_ < end; ++next_) {
      const size_t k = next_ & (kDraws - 1);
      std::free(live_[slot_[k]]);
      void* p = std::malloc(size_[k]);
      static_cast<char*>(p)[0] = 1;
      benchmark::DoNotOptimize(p);
      live_[slot_[k]] = p;
    }
  }

 private:
  static constexpr size_t kDraws = 1 << 16;
  std::vector<uint32_t> slot_, size_;
  std::vector<void*> live_;
  size_t next_ = 0;
};

// Random sizes 16..1039 bytes with 1024 blocks alive; each iteration frees one
// block chosen at random and allocates a new one in its place.
void malloc_free_random(benchmark::State& state) {
  const Pinned pinned(state, __func__);
  LiveSet set(1024, 16, 1039, 42);
  for (auto _ : state) set.replace(1);
}

void malloc_free_128k(benchmark::State& state) {
  const Pinned pinned(state, __func__);
  for (auto _ : state) {
    void* p = std::malloc(128 * 1024);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}

// One realloc per iteration: a block grows by 16 bytes at a time from 16 B to
// 64 KiB, then starts over.
void realloc_grow(benchmark::State& state) {
  const Pinned pinned(state, __func__);
  void* p = nullptr;
  size_t size = 0;
  for (auto _ : state) {
    size = size >= 64 * 1024 ? 16 : size + 16;
    if (size == 16) {
      std::free(p);
      p = nullptr;
    }
    p = std::realloc(p, size);
    static_cast<char*>(p)[size - 1] = 1;
    benchmark::DoNotOptimize(p);
  }
  std::free(p);
}

void calloc_4k(benchmark::State& state) {
  const Pinned pinned(state, __func__);
  for (auto _ : state) {
    void* p = std::calloc(1, 4096);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}

// Single-producer single-consumer ring: thread 0 mallocs and pushes, thread 1
// pops and frees, so every free is a free of another thread's block. Both
// threads run the same number of iterations, so the ring is empty at the end.
struct Ring {
  static constexpr size_t kSlots = 1024;
  void* slots[kSlots];
  alignas(64) std::atomic<size_t> head{0};  // written by the producer
  alignas(64) std::atomic<size_t> tail{0};  // written by the consumer
};
Ring g_ring;

// Spins, then yields: on a machine with fewer free cores than threads the
// other side must get to run.
template <class Ready>
void wait_for(Ready ready) {
  for (unsigned spins = 0; !ready(); ++spins)
    if (spins > 64) std::this_thread::yield();
}

void producer_consumer(benchmark::State& state) {
  const Pinned pinned(state, __func__);
  Ring& r = g_ring;
  if (state.thread_index() == 0) {
    size_t head = r.head.load(std::memory_order_relaxed);
    for (auto _ : state) {
      void* p = std::malloc(64 + (head & 255));
      static_cast<char*>(p)[0] = 1;
      wait_for([&] { return head - r.tail.load(std::memory_order_acquire) < Ring::kSlots; });
      r.slots[head % Ring::kSlots] = p;
      r.head.store(++head, std::memory_order_release);
    }
  } else {
    size_t tail = r.tail.load(std::memory_order_relaxed);
    for (auto _ : state) {
      wait_for([&] { return r.head.load(std::memory_order_acquire) != tail; });
      void* p = r.slots[tail % Ring::kSlots];
      r.tail.store(++tail, std::memory_order_release);
      std::free(p);
    }
  }
}

// Producer/consumer of 64-byte objects in batches: thread 0 mallocs a batch of
// kBatch and hands it over through a ring of kSlots batches, thread 1 frees the
// whole batch. Every free is of a block another thread allocated, in runs of one
// page's neighbouring blocks. One iteration is one batch.
struct BatchRing {
  static constexpr size_t kBatch = 256, kSlots = 8;
  void* slots[kSlots][kBatch];
  alignas(64) std::atomic<size_t> head{0};  // written by the producer
  alignas(64) std::atomic<size_t> tail{0};  // written by the consumer
};
BatchRing g_batch_ring;

void batch_handoff(benchmark::State& state, BatchRing& r) {
  if (state.thread_index() == 0) {
    size_t head = r.head.load(std::memory_order_relaxed);
    for (auto _ : state) {
      wait_for([&] { return head - r.tail.load(std::memory_order_acquire) < BatchRing::kSlots; });
      void** batch = r.slots[head % BatchRing::kSlots];
      for (size_t i = 0; i < BatchRing::kBatch; ++i) {
        batch[i] = std::malloc(64);
        static_cast<char*>(batch[i])[0] = 1;
      }
      r.head.store(++head, std::memory_order_release);
    }
  } else {
    size_t tail = r.tail.load(std::memory_order_relaxed);
    for (auto _ : state) {
      wait_for([&] { return r.head.load(std::memory_order_acquire) != tail; });
      void** batch = r.slots[tail % BatchRing::kSlots];
      for (size_t i = 0; i < BatchRing::kBatch; ++i) std::free(batch[i]);
      r.tail.store(++tail, std::memory_order_release);
    }
  }
}

void batch_handoff_64b(benchmark::State& state) {
  const Pinned pinned(state, __func__);
  batch_handoff(state, g_batch_ring);
}

// Both threads on one CPU for the timed loop (the first the workload may run on),
// with or without --pin: the threads take turns, the producer filling the ring and
// the consumer emptying it, and every free is still of the other thread's block.
// On two CPUs each batch's cache lines go from one core to the other, and what that
// costs depends on where the host places the two virtual CPUs: a shared machine's
// runs then fall in modes 3-9x apart for every allocator. Without the transfers what
// is left is the allocator's own cross-thread path. The calling thread's affinity is
// put back afterwards (Google Benchmark's thread 0 is the main thread).
class OnOneCpu {
 public:
  explicit OnOneCpu(const benchmark::State& state) : state_(state) {
    CPU_ZERO(&saved_);
    saved_ok_ = pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_) == 0;
    int cpu = -1;
    if (!g_pin_cpus.empty()) cpu = g_pin_cpus[0];
    for (int c = 0; cpu < 0 && saved_ok_ && c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &saved_)) cpu = c;
    if (cpu < 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  }
  ~OnOneCpu() {
    note_ran_on(state_, "batch_handoff_64b_1cpu");
    if (saved_ok_) pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_);
  }
  OnOneCpu(const OnOneCpu&) = delete;
  OnOneCpu& operator=(const OnOneCpu&) = delete;

 private:
  const benchmark::State& state_;
  cpu_set_t saved_;
  bool saved_ok_ = false;
};

BatchRing g_batch_ring_1cpu;

void batch_handoff_64b_1cpu(benchmark::State& state) {
  const OnOneCpu one(state);
  batch_handoff(state, g_batch_ring_1cpu);
}

// One thread, a live set of 10 000 blocks of 8 B to 4 KiB (uniform); each
// iteration frees a member chosen at random and mallocs a new random size in its
// place.
void live_set_10k_8b_4k(benchmark::State& state) {
  const Pinned pinned(state, __func__);
  LiveSet set(10000, 8, 4096, 42);
  for (auto _ : state) set.replace(1);
}

// Larson's server simulation on 2 threads: each benchmark thread keeps a live set
// of 1000 blocks of 8-1000 B; one iteration is one round, in which a new thread
// takes the live set over and replaces 10 000 random members (so it frees blocks
// the previous round's thread allocated), then exits.
void larson_2t_8b_1000b(benchmark::State& state) {
  const Pinned pinned(state, __func__);
  LiveSet set(1000, 8, 1000, 4141 + static_cast<uint64_t>(state.thread_index()));
  for (auto _ : state) {
    std::thread round([&] { set.replace(10000); });
    round.join();
  }
}

}  // namespace

const std::vector<std::string>& benchmark_names() {
  static const std::vector<std::string> names = {"malloc_free_random", "malloc_free_128k", "realloc_grow",
                                                 "calloc_4k", "producer_consumer",
                                                 "batch_handoff_64b", "batch_handoff_64b_1cpu", "live_set_10k_8b_4k",
                                                 "larson_2t_8b_1000b"};
  return names;
}

const std::vector<int>& pin_cpus() { return g_pin_cpus; }

std::map<std::string, std::vector<RanOn>> cpus_ran_on() {
  const std::lock_guard<std::mutex> lock(g_ran_on_mutex);
  return g_ran_on;
}

bool set_pinning(bool on) {
  g_pin_cpus.clear();
  if (!on) return true;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return false;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) g_pin_cpus.push_back(cpu);
  return !g_pin_cpus.empty();
}

void register_benchmarks() {
  benchmark::RegisterBenchmark("malloc_free_random", malloc_free_random)->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("malloc_free_128k", malloc_free_128k)->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("realloc_grow", realloc_grow)->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("calloc_4k", calloc_4k)->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("producer_consumer", producer_consumer)
      ->Threads(2)
      ->UseRealTime()
      ->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("batch_handoff_64b", batch_handoff_64b)
      ->Threads(2)
      ->UseRealTime()
      ->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("batch_handoff_64b_1cpu", batch_handoff_64b_1cpu)
      ->Threads(2)
      ->UseRealTime()
      ->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("live_set_10k_8b_4k", live_set_10k_8b_4k)->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("larson_2t_8b_1000b", larson_2t_8b_1000b)
      ->Threads(2)
      ->UseRealTime()
      ->Unit(benchmark::kNanosecond);
}

}  // namespace micro
