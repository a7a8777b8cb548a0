// idle-return: allocate a mixed heap, free all of it, then go idle without a
// single further call into the allocator, and time how long RSS takes to come
// back to where it started. The idle loop sleeps and reads statm through a
// descriptor opened beforehand; its marks are built on the stack. Single-threaded
// (only the allocator's own threads can give the memory back).
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
        {"tolerance", ParamType::Size, "10M", "", 0, 64.0 * 1024 * 1024 * 1024, {}, "how close to the start RSS counts as back"},
        {"step-ms", ParamType::Double, "5", "", 0.1, 1000, {}, "sleep between two RSS readings"},
        mhwl::seed_param(),
    },
    {
        {"ms_to_baseline", "ms", "lower",
         "from the last free until RSS is within the tolerance of the start RSS",
         "back to start RSS after"},
        {"rss_start_kb", "KiB", "", "RSS (statm) at the start mark"},
        {"rss_peak_kb", "KiB", "", "RSS with everything allocated"},
        {"rss_end_kb", "KiB", "lower", "RSS at the end of the idle time", "RSS at idle end"},
    }};

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

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const size_t total = static_cast<size_t>(p.integer("total"));
  const long tolerance_kb = static_cast<long>(p.integer("tolerance") / 1024);
  const double max_ms = p.number("max-ms");
  const long step_ns = static_cast<long>(p.number("step-ms") * 1e6);

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
  ctx.report.mark("allocated");

  // From the first free on: no allocator call until the idle time is over.
  for (auto* b : blocks) std::free(b);
  const auto t_free = std::chrono::steady_clock::now();
  ctx.report.mark_noalloc("freed");
  double ms_to_baseline = -1;
  long rss = statm.rss_kb();
  for (;;) {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_free).count();
    if (rss >= 0 && rss <= rss_start + tolerance_kb) {
      ms_to_baseline = ms;
      ctx.report.mark_noalloc("baseline");
      break;
    }
    if (ms >= max_ms) break;
    timespec ts{step_ns / 1000000000, step_ns % 1000000000};
    nanosleep(&ts, nullptr);
    rss = statm.rss_kb();
  }
  const long rss_end = statm.rss_kb();
  ctx.report.mark_noalloc("idle-end");

  if (ms_to_baseline >= 0) {
    ctx.report.metric("ms_to_baseline", ms_to_baseline);
  } else {
    char why[160];
    std::snprintf(why, sizeof why, "never within %ld KiB of the start RSS (%ld KiB) after %.0f ms; RSS was %ld KiB",
                  tolerance_kb, rss_start, max_ms, rss_end);
    ctx.report.metric_null("ms_to_baseline", why);
  }
  ctx.report.metric("rss_start_kb", static_cast<double>(rss_start));
  ctx.report.metric("rss_peak_kb", static_cast<double>(rss_peak));
  ctx.report.metric("rss_end_kb", static_cast<double>(rss_end));
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
