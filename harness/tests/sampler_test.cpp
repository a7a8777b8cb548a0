// The harness side of the mark protocol, one message at a time.
#include <gtest/gtest.h>

#include "measure/sampler.h"

namespace mh {
namespace {

TEST(MarkProtocol, MetricWithValue) {
  RunRecord r;
  apply_message(R"({"metric":"calls","value":300})", r);
  ASSERT_TRUE(r.workload_metrics["calls"].value);
  EXPECT_DOUBLE_EQ(*r.workload_metrics["calls"].value, 300);
}

TEST(MarkProtocol, MetricWithoutValueKeepsTheReason) {
  RunRecord r;
  apply_message(R"({"metric":"idle_hook_calls","value":null,"reason":"no idle API"})", r);
  EXPECT_FALSE(r.workload_metrics["idle_hook_calls"].value);
  EXPECT_EQ(r.workload_metrics["idle_hook_calls"].reason, "no idle API");
}

TEST(MarkProtocol, AllocatorIdentity) {
  RunRecord r;
  apply_message(R"({"allocator":{"name":"jemalloc","version":"5.3.0","library":"/x/libjemalloc.so.2"}})", r);
  EXPECT_EQ(r.allocator.identified, "jemalloc");
  EXPECT_EQ(r.allocator.version, "5.3.0");
  EXPECT_EQ(r.allocator.served_by, "/x/libjemalloc.so.2");
}

TEST(MarkProtocol, HwmAndAllocatorStats) {
  RunRecord r;
  apply_message(R"({"hwm_kb":4096})", r);
  apply_message(R"({"allocator_stats":{"purged":10}})", r);
  ASSERT_TRUE(r.hwm_kb.value);
  EXPECT_DOUBLE_EQ(*r.hwm_kb.value, 4096);
  EXPECT_EQ(r.allocator_stats["purged"], 10);
}

TEST(MarkProtocol, StructuredDataIsKeptUnderItsKey) {
  RunRecord r;
  apply_message(R"({"data":{"key":"benchmarks","value":[{"name":"BM_x","real_time":6.5}]}})", r);
  ASSERT_TRUE(r.data.contains("benchmarks"));
  EXPECT_EQ(r.data["benchmarks"][0]["real_time"], 6.5);
}

TEST(MarkProtocol, GarbageIsDiscardedWithoutHarm) {
  RunRecord r;
  EXPECT_TRUE(apply_message("not json {", r).is_discarded());
  EXPECT_TRUE(apply_message("[1,2]", r).is_discarded());
  EXPECT_TRUE(r.workload_metrics.empty());
}

}  // namespace
}  // namespace mh
