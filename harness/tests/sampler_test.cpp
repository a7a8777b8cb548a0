// The harness side of the mark protocol, one message at a time.
#include <gtest/gtest.h>

#include "measure/sampler.h"

namespace mh {
namespace {

void apply_message_ok(const std::string& line, RunRecord& r) {
  std::string error;
  ASSERT_TRUE(apply_message(line, r, error)) << error;
}

TEST(MarkProtocol, MetricWithValue) {
  RunRecord r;
  apply_message_ok(R"({"metric":"calls","value":300})", r);
  ASSERT_TRUE(r.workload_metrics["calls"].value);
  EXPECT_DOUBLE_EQ(*r.workload_metrics["calls"].value, 300);
}

TEST(MarkProtocol, MetricWithoutValueKeepsTheReason) {
  RunRecord r;
  apply_message_ok(R"({"metric":"idle_hook_calls","value":null,"reason":"no idle API"})", r);
  EXPECT_FALSE(r.workload_metrics["idle_hook_calls"].value);
  EXPECT_EQ(r.workload_metrics["idle_hook_calls"].reason, "no idle API");
}

TEST(MarkProtocol, AllocatorIdentity) {
  RunRecord r;
  apply_message_ok(R"({"allocator":{"name":"jemalloc","version":"5.3.0","library":"/x/libjemalloc.so.2"}})", r);
  EXPECT_EQ(r.allocator.identified, "jemalloc");
  EXPECT_EQ(r.allocator.version, "5.3.0");
  EXPECT_EQ(r.allocator.served_by, "/x/libjemalloc.so.2");
}

TEST(MarkProtocol, HwmAndAllocatorStats) {
  RunRecord r;
  apply_message_ok(R"({"hwm_kb":4096})", r);
  apply_message_ok(R"({"allocator_stats":{"purged":10}})", r);
  ASSERT_TRUE(r.hwm_kb.value);
  EXPECT_DOUBLE_EQ(*r.hwm_kb.value, 4096);
  EXPECT_EQ(r.allocator_stats["purged"], 10);
}

TEST(MarkProtocol, StructuredDataIsKeptUnderItsKey) {
  RunRecord r;
  apply_message_ok(R"({"data":{"key":"benchmarks","value":[{"name":"BM_x","real_time":6.5}]}})", r);
  ASSERT_TRUE(r.data.contains("benchmarks"));
  EXPECT_EQ(r.data["benchmarks"][0]["real_time"], 6.5);
}

TEST(MarkProtocol, GarbageIsRefusedWithoutHarm) {
  RunRecord r;
  std::string error;
  EXPECT_FALSE(apply_message("not json {", r, error));
  EXPECT_NE(error.find("not JSON"), std::string::npos) << error;
  EXPECT_FALSE(apply_message("[1,2]", r, error));
  EXPECT_NE(error.find("expected an object, found an array"), std::string::npos) << error;
  EXPECT_TRUE(r.workload_metrics.empty());
}

// Each names the field and what it should have been, and changes nothing.
TEST(MarkProtocol, AMessageOfTheWrongShapeIsRefusedNamingTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"metric":"x","reason":5})", "reason: expected a string, found 5"},
      {R"({"metric":5,"value":1})", "metric: expected a string, found 5"},
      {R"({"metric":"x","value":"1"})", "value: expected a number"},
      {R"({"allocator":{"name":7}})", "allocator.name: expected a string, found 7"},
      {R"({"data":{"key":1}})", "data.key: expected a string, found 1"},
      {R"({"hwm_kb":1.7e308})", "hwm_kb: expected an integer"},
      {R"({"mark":"a","seq":-1})", "seq: expected an integer from 0 to 4294967295, found -1"},
      {R"({"mark":"a","sync":"yes"})", "sync: expected true or false"},
      {R"({"error":null})", "error: expected a string, found null"},
  };
  for (const auto& [line, needle] : cases) {
    RunRecord r;
    std::string error;
    EXPECT_FALSE(apply_message(line, r, error)) << line;
    EXPECT_NE(error.find(needle), std::string::npos) << line << " -> " << error;
    EXPECT_TRUE(r.workload_metrics.empty() && r.data.empty() && !r.hwm_kb.value) << line;
  }
}

TEST(MarkProtocol, ADeeplyNestedMessageIsRefusedNamingWhere) {
  RunRecord r;
  std::string error;
  const std::string line = R"({"allocator_stats":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_FALSE(apply_message(line, r, error));
  EXPECT_NE(error.find("allocator_stats[0][0]"), std::string::npos) << error;
  EXPECT_NE(error.find("nested deeper than 32 levels"), std::string::npos) << error;
  EXPECT_TRUE(r.allocator_stats.is_null());
}

}  // namespace
}  // namespace mh
