// bench.cpp - scav's private micro benchmarks (Google Benchmark). Linked against
// nothing but libc's malloc: run it under LD_PRELOAD of each allocator (run_bench.sh).
// Single process, benchmark threads only; no shared state between benchmarks.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// malloc+free of random sizes in [16, 1039] with a window of 1024 live blocks: each
// step frees the oldest block and allocates a new one (sizes precomputed: the loop
// measures the allocator, not the random generator).
void BM_RandomWindow(benchmark::State& state) {
  constexpr size_t kWindow = 1024, kSizes = 1 << 16;
  std::vector<uint32_t> sizes(kSizes);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (auto& s : sizes) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    s = uint32_t(16 + x % 1024);
  }
  std::vector<void*> live(kWindow, nullptr);
  for (size_t i = 0; i < kWindow; i++) live[i] = malloc(sizes[i]);
  size_t i = 0;
  for (auto _ : state) {
    size_t slot = i & (kWindow - 1);
    free(live[slot]);
    void* p = malloc(sizes[i & (kSizes - 1)]);
    benchmark::DoNotOptimize(p);
    live[slot] = p;
    i++;
  }
  for (void* p : live) free(p);
  state.SetItemsProcessed(int64_t(state.iterations()));
}
BENCHMARK(BM_RandomWindow);

// One 128 KiB buffer per request: malloc, touch one byte, free.
void BM_Malloc128K(benchmark::State& state) {
  for (auto _ : state) {
    char* p = static_cast<char*>(malloc(128 * 1024));
    benchmark::DoNotOptimize(p);
    p[0] = 1;
    free(p);
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
}
BENCHMARK(BM_Malloc128K);

// A producer allocates 64-byte..1 KiB blocks and hands them in batches of 64 through
// a single-producer single-consumer ring of batches to a consumer thread that frees
// them: every free is remote. Batching keeps the hand-off off the measurement.
void BM_ProducerConsumer(benchmark::State& state) {
  constexpr size_t kBatch = 64, kRing = 64;
  struct Slot {
    std::atomic<bool> full{false};
    void* ptrs[kBatch];
  };
  std::vector<Slot> ring(kRing);
  std::atomic<bool> done{false};
  std::thread consumer([&] {
    size_t i = 0;
    for (;;) {
      Slot& s = ring[i % kRing];
      if (s.full.load(std::memory_order_acquire)) {
        for (void* p : s.ptrs) free(p);
        s.full.store(false, std::memory_order_release);
        i++;
      } else if (done.load(std::memory_order_acquire)) {
        if (!s.full.load(std::memory_order_acquire)) return;
      }
    }
  });
  size_t i = 0, n = 0;
  uint32_t x = 12345;
  Slot* cur = &ring[0];
  while (cur->full.load(std::memory_order_acquire)) {
  }
  for (auto _ : state) {
    x = x * 1103515245u + 12345u;
    void* p = malloc(64 + (x >> 16) % 960);
    benchmark::DoNotOptimize(p);
    cur->ptrs[n++] = p;
    if (n == kBatch) {
      cur->full.store(true, std::memory_order_release);
      n = 0;
      cur = &ring[++i % kRing];
      while (cur->full.load(std::memory_order_acquire)) {
      }
    }
  }
  for (size_t k = 0; k < n; k++) free(cur->ptrs[k]);
  done.store(true, std::memory_order_release);
  consumer.join();
  state.SetItemsProcessed(int64_t(state.iterations()));
}
BENCHMARK(BM_ProducerConsumer)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
