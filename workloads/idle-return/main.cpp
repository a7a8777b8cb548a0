// idle-return: allocate a mixed heap, free all of it, then go idle without a
// single further call into the allocator until RSS is back where it started
// (or the idle time is over). With --tick-ms the idle is a real program's: a
// timer opens and closes a file and formats a short string every tick (a few
// small blocks allocated and freed), as logging or a health check does. How soon it comes back is measured by the
// harness from the RSS curve after the "freed" mark (after.ms_to_half,
// after.ms_to_90pct, after.area_mb_s). The idle loop sleeps and reads statm through a
// descriptor opened beforehand; its marks are built on the stack. Single-threaded
// (only the allocator's own threads can give the memory back).
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mhwl/proc_self.h"
#include "mhwl/touch.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

const mhwl::WorkloadSpec kSpec{
    "idle-return",
    "free a mixed 256 MiB heap and go idle with no further allocator call: when does RSS come back?",
    "measured here: jemalloc with a background thread and 100 ms decay returns in about 200 ms; "
    "mimalloc 2.0.9 and tcmalloc never do without a further call",
    {
        {"total", ParamType::Size, "256M", "64M", 1024.0 * 1024, 64.0 * 1024 * 1024 * 1024, {}, "bytes allocated, then freed"},
        {"max-ms", ParamType::Double, "3000", "500", 0, 3600000, {}, "longest idle time"},
        {"tolerance", ParamType::Size, "10M", "4M", 0, 64.0 * 1024 * 1024 * 1024, {},
         "how close to the start RSS counts as back: the idle time ends there"},
        {"step-ms", ParamType::Double, "5", "", 0.1, 1000, {}, "sleep between two RSS readings"},
        {"tick-ms", ParamType::Double, "0", "", 0, 60000, {},
         "while idle, every this many ms open and close a file and format a short string (0: no allocator call "
         "at all)"},
        mhwl::seed_param(),
    },
    {
        {"rss_start_kb", "KiB", "", "RSS (statm) at the start mark"},
        {"rss_peak_kb", "KiB", "", "RSS with everything allocated"},
        {"rss_end_kb", "KiB", "lower", "RSS at the end of the idle time", "RSS at idle end"},
        {"ms_back_to_start", "ms", "lower",
         "time from the last free until RSS was within --tolerance of the start RSS (the baseline mark), read every "
         "--step-ms; null when it was not within --max-ms",
         "back to start+tolerance after"},
        {"ticks", "count", "", "timer ticks while idle (--tick-ms), each opening and closing a file"},
        {"usable_kb", "KiB", "",
         "the sum of malloc_usable_size over the blocks at the allocated mark: what the allocator handed out, which "
         "the heap ledger's live heap (--ledger) is checked against"},
    },
    "freed",
    {{"after.ms_to_90pct", "90% given back after"}},
    {"after.ms_to_half", "after.area_mb_s", "peak_rss_kb", "final_rss_kb"}};

// Byte shares of the mix: many small blocks, fewer medium and large ones, and a
// few huge ones (the "huge" share is what the few blocks of 1-8 MiB add up to).
struct SizeClass {
  size_t min, max;
  double share;
};
constexpr SizeClass kMix[] = {
    {16, 4096, 0.25},
    {4096, 96 * 1024, 0.25},
    {96 * 1024, 512 * 1024, 0.30},
    {1024 * 1024, 8 * 1024 * 1024, 0.20},
};

// One tick of an idle program's timer: a file opened, read and closed (stdio's
// buffer is a heap block) and a short string formatted into a heap block.
void tick(size_t n) {
  if (FILE* f = std::fopen("/proc/self/stat", "r")) {
    char line[64];
    if (!std::fgets(line, sizeof line, f)) line[0] = 0;
    std::fclose(f);
  }
  std::string s = "tick " + std::to_string(n) + " at the idle timer of idle-return";
  asm volatile("" : : "r"(s.data()) : "memory");
}

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const size_t total = static_cast<size_t>(p.integer("total"));
  const long tolerance_kb = static_cast<long>(p.integer("tolerance") / 1024);
  const double max_ms = p.number("max-ms");
  const long step_ns = static_cast<long>(p.number("step-ms") * 1e6);
  const double tick_ms = p.number("tick-ms");
  size_t ticks = 0;

  // Sizes, their order and the pointer array are made before the start mark.
  std::vector<size_t> sizes;
  for (const auto& c : kMix) {
    const size_t budget = static_cast<size_t>(static_cast<double>(total) * c.share);
    for (size_t sum = 0; sum < budget;) {
      size_t s = std::min(c.min + ctx.rng() % (c.max - c.min + 1), budget - sum);
      sizes.push_back(s);
      sum += s;
    }
  }
  std::shuffle(sizes.begin(), sizes.end(), ctx.rng);
  std::vector<void*> blocks(sizes.size(), nullptr);
  mhwl::StatmReader statm;

  const long rss_start = statm.rss_kb();
  ctx.report.mark("start");
  for (size_t i = 0; i < blocks.size(); ++i) {
    blocks[i] = std::malloc(sizes[i]);
    if (!blocks[i]) throw std::bad_alloc();
    mhwl::touch_pages(blocks[i], sizes[i]);
  }
  const long rss_peak = statm.rss_kb();
  size_t usable = 0;
  for (auto* b : blocks) usable += malloc_usable_size(b);
  ctx.report.mark("allocated");

  // From the first free on: no allocator call until the idle time is over,
  // but for the ticks when --tick-ms asks for them.
  for (auto* b : blocks) std::free(b);
  const auto t_free = std::chrono::steady_clock::now();
  ctx.report.mark_noalloc("freed");
  long rss = statm.rss_kb();
  double next_tick = tick_ms;
  double back_ms = -1, ms = 0;
  for (;;) {
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_free).count();
    if (rss >= 0 && rss <= rss_start + tolerance_kb) {
      back_ms = ms;
      ctx.report.mark_noalloc("baseline");
      break;
    }
    if (ms >= max_ms) break;
    if (tick_ms > 0 && ms >= next_tick) {
      tick(ticks++);
      while (next_tick <= ms) next_tick += tick_ms;
    }
    // Sleep a step, or to the next tick if that comes first.
    long sleep_ns = step_ns;
    if (tick_ms > 0) sleep_ns = std::min(sleep_ns, std::max(0L, static_cast<long>((next_tick - ms) * 1e6)));
    timespec ts{sleep_ns / 1000000000, sleep_ns % 1000000000};
    nanosleep(&ts, nullptr);
    rss = statm.rss_kb();
  }
  const long rss_end = statm.rss_kb();
  ctx.report.mark_noalloc("idle-end");

  ctx.report.metric("rss_start_kb", static_cast<double>(rss_start));
  ctx.report.metric("rss_peak_kb", static_cast<double>(rss_peak));
  ctx.report.metric("rss_end_kb", static_cast<double>(rss_end));
  ctx.report.metric("ticks", static_cast<double>(ticks));
  ctx.report.metric("usable_kb", static_cast<double>(usable) / 1024);
  if (back_ms >= 0)
    ctx.report.metric("ms_back_to_start", back_ms);
  else
    ctx.report.metric_above("ms_back_to_start", ms, "RSS was not within --tolerance of the start in --max-ms");
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
