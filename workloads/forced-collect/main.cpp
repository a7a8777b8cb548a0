// forced-collect: allocate a large heap in ~1 MiB blocks, free it, and at once ask
// the allocator to give free memory back with its own collect call; RSS is read
// as soon as the call returns. Single-threaded (the allocator may run its own threads).
#include <cstdlib>
#include <vector>

#include "mhwl/allocator_probe.h"
#include "mhwl/proc_self.h"
#include "mhwl/touch.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

const mhwl::WorkloadSpec kSpec{
    "forced-collect",
    "free a large heap and call the allocator's collect at once",
    "003: a forced collect that met a purge pass in progress returned with 1-4 of 256 MiB purged "
    "before the fix; Bun.gc(true) released 38-42 MB where more than 300 were expected",
    {
        {"total", ParamType::Size, "384M", "96M", 1024.0 * 1024, 64.0 * 1024 * 1024 * 1024, {}, "bytes allocated and freed"},
        {"min-block", ParamType::Size, "768K", "", 16, 1024.0 * 1024 * 1024, {}, "smallest block"},
        {"max-block", ParamType::Size, "1280K", "", 16, 1024.0 * 1024 * 1024, {}, "largest block"},
        mhwl::seed_param(),
    },
    {
        {"rss_after_kb", "KiB", "lower", "RSS (statm) right after the collect call returned", "RSS after collect"},
        {"rss_freed_kb", "KiB", "", "RSS right after the frees, before the collect"},
        {"collect_ms", "ms", "", "time spent in the collect call", "collect"},
    },
    "collected",
    {},
    {"peak_rss_kb", "final_rss_kb"}};

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const size_t total = static_cast<size_t>(p.integer("total"));
  const size_t min_block = static_cast<size_t>(p.integer("min-block"));
  const size_t max_block = std::max(min_block, static_cast<size_t>(p.integer("max-block")));

  const std::vector<size_t> sizes = mhwl::split_into_blocks(ctx.rng, total, min_block, max_block);
  std::vector<void*> blocks(sizes.size(), nullptr);
  mhwl::StatmReader statm;

  const mhwl::AllocatorIdentity who = mhwl::probe_allocator();

  ctx.report.mark("start");
  for (size_t i = 0; i < blocks.size(); ++i) {
    blocks[i] = std::malloc(sizes[i]);
    if (!blocks[i]) throw std::bad_alloc();
    mhwl::touch_pages(blocks[i], sizes[i]);
  }
  ctx.report.mark("allocated");
  for (auto* b : blocks) std::free(b);
  const long rss_freed = statm.rss_kb();
  const auto t0 = std::chrono::steady_clock::now();
  const std::optional<std::string> call = mhwl::allocator_collect();
  const auto t1 = std::chrono::steady_clock::now();
  const long rss_after = statm.rss_kb();
  ctx.report.mark("collected");

  ctx.report.metric("rss_freed_kb", static_cast<double>(rss_freed));
  // malloc_trim(0) is allocator_collect()'s last resort: it trims glibc's own
  // heap, which says nothing about another allocator serving malloc.
  std::string missing;
  if (!call) missing = "the allocator exports no collect call";
  else if (*call == "malloc_trim(0)" && who.name != "glibc")
    missing = "the allocator serving malloc (" + who.name + ", " + who.library +
              ") exports no collect call; malloc_trim(0) would only trim glibc's heap";
  if (missing.empty()) {
    ctx.report.metric("rss_after_kb", static_cast<double>(rss_after));
    ctx.report.metric("collect_ms", std::chrono::duration<double, std::milli>(t1 - t0).count());
    ctx.report.data("collect", *call);
  } else {
    ctx.report.metric_null("rss_after_kb", missing);
    ctx.report.metric_null("collect_ms", missing);
    ctx.report.data("collect", nullptr);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
