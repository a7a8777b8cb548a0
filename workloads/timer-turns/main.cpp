// timer-turns: an event loop that does nothing but turn on a short repeating
// timer, with a little allocation per turn, so that what the allocator does
// around each wait (idle hooks, a background thread it wakes) shows in the
// harness's per-thread CPU time and context switches. Loop thread only.
#include <cstdlib>
#include <vector>

#include "mhwl/event_loop.h"
#include "mhwl/touch.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

mhwl::ParamSpec idle_hook_inline() {
  // The seed's loop handed off around every poll: inline is the situation measured.
  auto p = mhwl::idle_hook_param();
  p.def = "inline";
  return p;
}

const mhwl::WorkloadSpec kSpec{
    "timer-turns",
    "an event loop turning on a 1 ms timer with a little allocation per turn",
    "004: 500 turns of a 1 ms timer put the allocator's scavenger thread to sleep 391-505 "
    "times before the fix and 15-19 after (bound 125); read the threads[] of the report",
    {
        {"turns", ParamType::Int, "500", "100", 1, 10000000, {}, "timer expirations to run"},
        {"interval-ms", ParamType::Double, "1", "", 0.001, 60000, {}, "period of the timer"},
        {"blocks", ParamType::Int, "4", "", 0, 4096, {}, "small blocks allocated, touched and freed per turn"},
        idle_hook_inline(),
        mhwl::seed_param(),
    },
    {
        {"turns", "count", "", "timer expirations handled"},
        {"loop_ms", "ms", "lower", "wall time of the loop from the first arming to the last turn"},
    },
    "turns-done",
    {},
    {"workload.loop_ms", "cpu_ms", "peak_rss_kb"}};

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const int64_t turns = p.integer("turns");
  const size_t blocks = static_cast<size_t>(p.integer("blocks"));
  const auto interval = std::chrono::microseconds(static_cast<int64_t>(p.number("interval-ms") * 1000));

  // Sizes drawn up front so the loop's only work is the allocation itself.
  std::vector<size_t> sizes(1024);
  for (auto& s : sizes) s = 16 + ctx.rng() % 241;
  std::vector<void*> live(blocks);

  int64_t fired = 0;
  size_t next_size = 0;
  mhwl::EventLoop loop(ctx.idle);
  ctx.report.mark("start");
  const auto t0 = std::chrono::steady_clock::now();
  loop.add_timer(interval, true, [&] {
    for (auto& b : live) {
      b = std::malloc(sizes[next_size++ % sizes.size()]);
      mhwl::touch_pages(b, 1);
    }
    for (auto* b : live) std::free(b);
    if (++fired == turns) loop.stop();
  });
  loop.run();
  const double loop_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ctx.report.mark("turns-done");

  ctx.report.metric("turns", static_cast<double>(fired));
  ctx.report.metric("loop_ms", loop_ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
