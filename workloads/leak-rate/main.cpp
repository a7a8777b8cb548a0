// leak-rate: a program that leaks at a set rate from one known call site
// (leak_block) while a working set churns at a steady level, so that the live
// heap grows by the rate and nothing else does. The harness's growth verdict
// (growth.live_mb_per_min, docs/leak-or-allocator.md) should find the rate.
// Single-threaded.
#include <chrono>
#include <cstdlib>
#include <new>

#include "mhwl/churn.h"
#include "mhwl/touch.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

constexpr double kGiB = 1024.0 * 1024 * 1024;

const mhwl::WorkloadSpec kSpec{
    "leak-rate",
    "leak at a set rate from one call site while a working set churns flat: the live heap grows by the rate",
    "not a seed: a known leak for the growth verdict (leak or allocator?) to find",
    {
        {"rate", ParamType::Size, "1M", "30M", 0, 64 * kGiB, {},
         "bytes leaked per minute (at smoke size scaled up so that a few seconds show it)"},
        {"duration", ParamType::Double, "90", "4", 0.5, 86400, {}, "seconds between the growth-start and growth-end marks"},
        {"warmup", ParamType::Double, "2", "0.5", 0, 3600, {}, "seconds of churn before the growth-start mark"},
        {"leak-block", ParamType::Size, "4K", "", 16, 64 * 1024 * 1024, {}, "size of each leaked block"},
        {"level", ParamType::Size, "32M", "8M", 0, 64 * kGiB, {}, "the churning working set, held about level"},
        {"min-block", ParamType::Size, "64", "", 1, 64 * 1024 * 1024, {}, "smallest block of the working set"},
        {"max-block", ParamType::Size, "16K", "", 1, 64 * 1024 * 1024, {}, "largest block of the working set"},
        {"ops-per-s", ParamType::Double, "20000", "", 0, 1e7, {}, "working-set blocks replaced per second"},
        mhwl::seed_param(),
    },
    {
        {"set_mb_per_min", "MB/min", "", "the leak rate asked for (--rate) in MB per minute (MB = 10^6 bytes)"},
        {"leaked_kb", "KiB", "", "bytes leaked between the growth marks (requested sizes)"},
        {"leaked_mb_per_min", "MB/min", "",
         "what was leaked between the growth marks over their time: --rate as the program met it"},
    },
    "",
    {},
    {"growth.live_mb_per_min", "peak_rss_kb"}};

// The leak's call site: a block allocated, written, and forgotten.
__attribute__((noinline)) void leak_block(size_t size) {
  void* p = std::malloc(size);
  if (!p) throw std::bad_alloc();
  mhwl::touch_pages(p, size);
}

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const double rate_per_s = p.number("rate") / 60, duration = p.number("duration");
  const auto block = static_cast<size_t>(p.integer("leak-block"));
  const auto min_block = static_cast<size_t>(p.integer("min-block")),
             max_block = std::max(min_block, static_cast<size_t>(p.integer("max-block")));
  const std::chrono::milliseconds tick(10);
  const auto per_tick = static_cast<size_t>(p.number("ops-per-s") * 0.01);

  mhwl::ChurnSet set(ctx.rng, static_cast<size_t>(p.integer("level")), min_block, max_block);
  ctx.report.mark("start");
  mhwl::every_tick_until(std::chrono::steady_clock::now(), p.number("warmup"), tick,
                         [&](double) { set.churn(per_tick); });

  const auto from = std::chrono::steady_clock::now();
  ctx.report.mark("growth-start");
  double leaked = 0;
  mhwl::every_tick_until(from, duration, tick, [&](double elapsed) {
    set.churn(per_tick);
    for (; leaked + double(block) <= rate_per_s * elapsed; leaked += double(block)) leak_block(block);
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
  ctx.report.mark("growth-end");

  ctx.report.metric("set_mb_per_min", p.number("rate") / 1e6);
  ctx.report.metric("leaked_kb", leaked / 1024);
  ctx.report.metric("leaked_mb_per_min", leaked / 1e6 / (seconds / 60));
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
