// The benchmark bodies (see benchmarks.h). Each iteration is one allocator
// operation pair; pointers go through benchmark::DoNotOptimize so that the
// compiler cannot drop a malloc/free pair. Google Benchmark runs each body on its
// own thread(s); the ring of producer_consumer is shared by exactly two threads.
#include "benchmarks.h"

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

namespace micro {

namespace {

// Random sizes 16..1039 bytes with 1024 blocks alive; each iteration frees one
// block chosen at random and allocates a new one in its place.
void malloc_free_random(benchmark::State& state) {
  constexpr size_t kLive = 1024, kDraws = 1 << 16;
  std::mt19937_64 rng(42);
  std::vector<uint32_t> slot(kDraws), size(kDraws);
  for (size_t i = 0; i < kDraws; ++i) {
    slot[i] = static_cast<uint32_t>(rng() % kLive);
    size[i] = static_cast<uint32_t>(16 + rng() % 1024);
  }
  std::vector<void*> live(kLive);
  for (size_t i = 0; i < kLive; ++i) live[i] = std::malloc(size[i]);
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ & (kDraws - 1);
    std::free(live[slot[k]]);
    void* p = std::malloc(size[k]);
    static_cast<char*>(p)[0] = 1;
    benchmark::DoNotOptimize(p);
    live[slot[k]] = p;
  }
  for (auto* p : live) std::free(p);
}

void malloc_free_128k(benchmark::State& state) {
  for (auto _ : state) {
    void* p = std::malloc(128 * 1024);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}

// One realloc per iteration: a block grows by 16 bytes at a time from 16 B to
// 64 KiB, then starts over.
void realloc_grow(benchmark::State& state) {
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

}  // namespace

const std::vector<std::string>& benchmark_names() {
  static const std::vector<std::string> names = {"malloc_free_random", "malloc_free_128k", "realloc_grow",
                                                 "calloc_4k", "producer_consumer"};
  return names;
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
}

}  // namespace micro
