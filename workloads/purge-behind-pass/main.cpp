// purge-behind-pass: free most of a large heap, wait (busy) until the allocator
// has started giving it back, free the rest while it is at it, and time how long
// the rest takes to go. No thread blocks and nothing else calls the allocator
// during the waits. Single-threaded (the allocator may run its own threads).
#include <cstdlib>
#include <vector>

#include "mhwl/proc_self.h"
#include "mhwl/spin.h"
#include "mhwl/touch.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

const mhwl::WorkloadSpec kSpec{
    "purge-behind-pass",
    "free 2/3 of a heap, wait until RSS starts to fall, free the rest during the purge",
    "003: 256 MiB freed, then 64 MiB (here 128 MiB) more while the purge pass ran: 266 of 320 "
    "MiB purged before the fix, all of it about 100 ms after the second free with it",
    {
        {"total", ParamType::Size, "384M", "96M", 4.0 * 1024 * 1024, 64.0 * 1024 * 1024 * 1024, {},
         "bytes allocated; the first free is 2/3 of it, the first wait ends at a 1/6 drop, the "
         "second at a 7/8 drop (256, 64 and 336 MiB of 384)"},
        {"min-block", ParamType::Size, "768K", "", 16, 1024.0 * 1024 * 1024, {}, "smallest block"},
        {"max-block", ParamType::Size, "1280K", "", 16, 1024.0 * 1024 * 1024, {}, "largest block"},
        {"wait-ms", ParamType::Double, "2000", "500", 0, 3600000, {}, "longest busy wait of each of the two waits"},
        mhwl::seed_param(),
    },
    {
        {"rss_drop_kb", "KiB", "higher", "fall of RSS from its peak to the end of the second wait", "RSS drop"},
        {"ms", "ms", "lower", "from the second free to the end of the second wait"},
        {"first_drop_seen", "bool", "", "1 when RSS fell by 1/6 of the total within wait-ms of the first free"},
        {"first_wait_ms", "ms", "", "length of the first wait"},
    },
    "first-free",
    {},
    {"final_rss_kb", "after.area_mb_s"}};

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const size_t total = static_cast<size_t>(p.integer("total"));
  const size_t min_block = static_cast<size_t>(p.integer("min-block"));
  const size_t max_block = std::max(min_block, static_cast<size_t>(p.integer("max-block")));
  const auto wait = std::chrono::duration_cast<mhwl::SpinClock::duration>(
      std::chrono::duration<double, std::milli>(p.number("wait-ms")));
  const long first_drop_kb = static_cast<long>(total / 6 / 1024);
  const long final_drop_kb = static_cast<long>(total / 8 * 7 / 1024);

  // Block sizes and the pointer array exist before the start mark.
  const std::vector<size_t> sizes = mhwl::split_into_blocks(ctx.rng, total, min_block, max_block);
  std::vector<void*> blocks(sizes.size(), nullptr);
  mhwl::StatmReader statm;

  ctx.report.mark("start");
  for (size_t i = 0; i < blocks.size(); ++i) {
    blocks[i] = std::malloc(sizes[i]);
    if (!blocks[i]) throw std::bad_alloc();
    mhwl::touch_pages(blocks[i], sizes[i]);
  }
  const long rss_peak = statm.rss_kb();
  ctx.report.mark("allocated");

  // The first 2/3 by bytes, in allocation order.
  size_t split = 0;
  for (size_t freed = 0; split < blocks.size() && freed < total / 3 * 2; ++split) {
    freed += sizes[split];
    std::free(blocks[split]);
  }
  // Marks in the measured span go without a heap allocation (mark_noalloc).
  ctx.report.mark_noalloc("first-free");
  const auto t_first = mhwl::SpinClock::now();
  const bool first_seen =
      mhwl::spin_until(t_first + wait, [&] { return rss_peak - statm.rss_kb() >= first_drop_kb; });
  const double first_wait_ms =
      std::chrono::duration<double, std::milli>(mhwl::SpinClock::now() - t_first).count();

  ctx.report.mark_noalloc("first-wait-end");
  for (size_t i = split; i < blocks.size(); ++i) std::free(blocks[i]);
  const auto t_second = mhwl::SpinClock::now();
  long rss_now = rss_peak;
  mhwl::spin_until(t_second + wait, [&] {
    rss_now = statm.rss_kb();
    return rss_peak - rss_now >= final_drop_kb;
  });
  const double ms = std::chrono::duration<double, std::milli>(mhwl::SpinClock::now() - t_second).count();
  ctx.report.mark("second-wait-end");

  ctx.report.metric("rss_drop_kb", static_cast<double>(rss_peak - rss_now));
  ctx.report.metric("ms", ms);
  ctx.report.metric("first_drop_seen", first_seen ? 1 : 0);
  ctx.report.metric("first_wait_ms", first_wait_ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
