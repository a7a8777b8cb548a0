// flat-churn: a working set allocated and freed at a steady level for a set
// time, nothing kept: flat in the live heap and, once the allocator has its
// working pages, flat outside it too. The growth verdict's control: it should
// say "no growth". Single-threaded.
#include <chrono>

#include "mhwl/churn.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

constexpr double kGiB = 1024.0 * 1024 * 1024;

const mhwl::WorkloadSpec kSpec{
    "flat-churn",
    "allocate and free a working set at a steady level: flat in the live heap and outside it",
    "not a seed: the control of the growth verdict (no growth to find)",
    {
        {"duration", ParamType::Double, "60", "3", 0.5, 86400, {}, "seconds between the growth-start and growth-end marks"},
        {"warmup", ParamType::Double, "2", "0.5", 0, 3600, {}, "seconds of churn before the growth-start mark"},
        {"level", ParamType::Size, "64M", "8M", 0, 64 * kGiB, {}, "the churning working set, held about level"},
        {"min-block", ParamType::Size, "64", "", 1, 64 * 1024 * 1024, {}, "smallest block"},
        {"max-block", ParamType::Size, "64K", "", 1, 64 * 1024 * 1024, {}, "largest block"},
        {"ops-per-s", ParamType::Double, "20000", "", 0, 1e7, {}, "blocks replaced per second"},
        mhwl::seed_param(),
    },
    {
        {"replaced", "count", "", "blocks freed and allocated again between the growth marks"},
    },
    "",
    {},
    {"growth.live_mb_per_min", "growth.outside_mb_per_min", "peak_rss_kb"}};

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const auto min_block = static_cast<size_t>(p.integer("min-block")),
             max_block = std::max(min_block, static_cast<size_t>(p.integer("max-block")));
  const auto per_tick = static_cast<size_t>(p.number("ops-per-s") * 0.01);
  const std::chrono::milliseconds tick(10);

  mhwl::ChurnSet set(ctx.rng, static_cast<size_t>(p.integer("level")), min_block, max_block);
  ctx.report.mark("start");
  mhwl::every_tick_until(std::chrono::steady_clock::now(), p.number("warmup"), tick,
                         [&](double) { set.churn(per_tick); });
  ctx.report.mark("growth-start");
  double replaced = 0;
  mhwl::every_tick_until(std::chrono::steady_clock::now(), p.number("duration"), tick, [&](double) {
    set.churn(per_tick);
    replaced += double(per_tick);
  });
  ctx.report.mark("growth-end");
  ctx.report.metric("replaced", replaced);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
