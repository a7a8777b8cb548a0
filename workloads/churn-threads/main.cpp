// churn-threads: worker threads allocate, touch and free 1-8 MB buffers for a
// while, free everything, then stay busy without ever blocking (no sleep, no
// futex) so that only the allocator's own threads can give the memory back. Each
// worker owns its buffers; the main thread reads only the atomics below.
#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "mhwl/proc_self.h"
#include "mhwl/spin.h"
#include "mhwl/thread_pool.h"
#include "mhwl/touch.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

const mhwl::WorkloadSpec kSpec{
    "churn-threads",
    "threads churn 1-8 MB buffers, free everything, then spin without blocking",
    "003: 8 workers churning 1-8 MB buffers for 3 s, then spinning, held 578 MB RSS after a "
    "quiet 2.5 s before the purge fix and 91 MB after",
    {
        {"threads", ParamType::Int, "8", "2", 1, 256, {}, "worker threads"},
        {"seconds", ParamType::Double, "3", "0.3", 0, 3600, {}, "how long the workers churn"},
        {"spin-ms", ParamType::Double, "2500", "300", 0, 3600000, {}, "how long they spin after freeing everything"},
        {"min-size", ParamType::Size, "1M", "", 1, 1024.0 * 1024 * 1024, {}, "smallest buffer"},
        {"max-size", ParamType::Size, "8M", "", 1, 1024.0 * 1024 * 1024, {}, "largest buffer"},
        {"live", ParamType::Int, "8", "", 1, 4096, {}, "buffers each worker holds at most; a round replaces one at random"},
        mhwl::seed_param(),
    },
    {
        {"rss_end_kb", "KiB", "lower", "RSS (statm) at the end of the spin", "RSS after spin"},
        {"rss_churn_end_kb", "KiB", "", "RSS (statm) when every worker has freed everything"},
        {"rounds", "count", "", "buffers allocated and touched, all workers"},
    },
    "churn-end",
    {},
    {"peak_rss_kb", "final_rss_kb"}};

struct Shared {
  std::atomic<size_t> freed{0};       // workers that have freed everything
  std::atomic<bool> stop{false};      // set by main at the end of the spin
  std::atomic<uint64_t> rounds{0};
};

void worker(size_t index, const mhwl::Params& p, uint64_t seed, Shared& shared) {
  mhwl::set_thread_name("churn-" + std::to_string(index));
  std::mt19937_64 rng(seed + index);
  const size_t min_size = static_cast<size_t>(p.integer("min-size"));
  const size_t max_size = std::max(min_size, static_cast<size_t>(p.integer("max-size")));
  std::vector<void*> live(static_cast<size_t>(p.integer("live")), nullptr);
  std::vector<size_t> live_size(live.size(), 0);
  const auto end = mhwl::SpinClock::now() +
                   std::chrono::duration_cast<mhwl::SpinClock::duration>(std::chrono::duration<double>(p.number("seconds")));
  uint64_t rounds = 0;
  while (mhwl::SpinClock::now() < end) {
    const size_t slot = rng() % live.size();
    std::free(live[slot]);
    const size_t size = min_size + rng() % (max_size - min_size + 1);
    live[slot] = std::malloc(size);
    if (!live[slot]) throw std::bad_alloc();
    mhwl::touch_pages(live[slot], size, static_cast<unsigned char>(rounds));
    ++rounds;
  }
  for (auto*& b : live) {
    std::free(b);
    b = nullptr;
  }
  shared.rounds += rounds;
  shared.freed.fetch_add(1, std::memory_order_release);
  // Busy until main says stop: no system call that blocks, only loads.
  while (!shared.stop.load(std::memory_order_acquire)) mhwl::cpu_relax();
}

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const size_t threads = static_cast<size_t>(p.integer("threads"));
  Shared shared;
  const uint64_t seed = ctx.rng();

  ctx.report.mark("start");
  std::vector<std::thread> workers;
  for (size_t i = 0; i < threads; ++i) workers.emplace_back(worker, i, std::cref(p), seed, std::ref(shared));

  // The main thread may block (the seed's main thread sat in a wait); it polls
  // the workers' progress with short sleeps.
  while (shared.freed.load(std::memory_order_acquire) < threads)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const long rss_churn_end = mhwl::read_rss_kb();
  ctx.report.mark("churn-end");
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(p.number("spin-ms")));
  const long rss_end = mhwl::read_rss_kb();
  ctx.report.mark("spin-end");
  shared.stop.store(true, std::memory_order_release);
  for (auto& t : workers) t.join();

  ctx.report.metric("rss_end_kb", static_cast<double>(rss_end));
  ctx.report.metric("rss_churn_end_kb", static_cast<double>(rss_churn_end));
  ctx.report.metric("rounds", static_cast<double>(shared.rounds.load()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
