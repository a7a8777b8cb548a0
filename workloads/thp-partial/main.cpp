// thp-partial: fill many 2 MiB spans with mid-size blocks, free all but a few per
// span, and see what stays resident, huge pages included. Whether the allocator
// asks for transparent huge pages (madvise) is its own business: this workload
// makes no madvise call. Single-threaded.
#include <time.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "mhwl/proc_self.h"
#include "mhwl/touch.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

constexpr size_t kHugePage = 2u << 20;

const mhwl::WorkloadSpec kSpec{
    "thp-partial",
    "many 2 MiB spans left partly used: what stays resident, and how much of it as huge pages",
    "002: with THP in madvise mode an allocator that madvises its arenas kept every partly used "
    "2 MiB page resident; building it without THP lowered a compile's peak by 85 MB (-3.2%)",
    {
        {"regions", ParamType::Int, "64", "8", 1, 65536, {}, "2 MiB spans' worth of blocks allocated"},
        {"block", ParamType::Size, "32K", "", 16, 2.0 * 1024 * 1024, {}, "size of each block"},
        {"keep-every", ParamType::Int, "16", "", 1, 1000000, {},
         "keep every Nth block in allocation order, free the others"},
        {"settle-ms", ParamType::Double, "1000", "100", 0, 3600000, {},
         "idle time after the frees before the readings (for allocators that purge later)"},
    },
    {
        {"rss_kb", "KiB", "lower", "RSS (statm) after the settle time", "RSS settled"},
        {"anon_huge_kb", "KiB", "", "AnonHugePages of smaps_rollup after the settle time", "huge pages settled"},
        {"live_kb", "KiB", "", "bytes of the blocks still allocated"},
        {"rss_peak_kb", "KiB", "", "RSS with every block allocated"},
        {"anon_huge_peak_kb", "KiB", "", "AnonHugePages with every block allocated"},
    },
    "freed",
    {},
    {"peak_rss_kb", "final_rss_kb"}};

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const size_t block = static_cast<size_t>(p.integer("block"));
  const size_t count = static_cast<size_t>(p.integer("regions")) * kHugePage / block;
  const size_t keep_every = static_cast<size_t>(p.integer("keep-every"));
  std::vector<void*> blocks(count, nullptr);

  ctx.report.mark("start");
  for (auto& b : blocks) {
    b = std::malloc(block);
    if (!b) throw std::bad_alloc();
    mhwl::touch_pages(b, block);
  }
  const long rss_peak = mhwl::read_rss_kb();
  const long huge_peak = mhwl::read_anon_huge_kb();
  ctx.report.mark("allocated");

  size_t live = 0;
  for (size_t i = 0; i < count; ++i) {
    if (i % keep_every == 0) {
      ++live;
      continue;
    }
    std::free(blocks[i]);
    blocks[i] = nullptr;
  }
  ctx.report.mark("freed");
  const long settle_ns = static_cast<long>(p.number("settle-ms") * 1e6);
  timespec ts{settle_ns / 1000000000, settle_ns % 1000000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
  const long rss = mhwl::read_rss_kb();
  const long huge = mhwl::read_anon_huge_kb();
  ctx.report.mark("settled");

  ctx.report.metric("rss_kb", static_cast<double>(rss));
  ctx.report.metric("live_kb", static_cast<double>(live * block) / 1024.0);
  ctx.report.metric("rss_peak_kb", static_cast<double>(rss_peak));
  if (huge < 0) {
    const char* why = "/proc/self/smaps_rollup has no AnonHugePages (kernel without THP or smaps_rollup)";
    ctx.report.metric_null("anon_huge_kb", why);
    ctx.report.metric_null("anon_huge_peak_kb", why);
  } else {
    ctx.report.metric("anon_huge_kb", static_cast<double>(huge));
    ctx.report.metric("anon_huge_peak_kb", static_cast<double>(huge_peak));
  }
  for (auto* b : blocks) std::free(b);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
