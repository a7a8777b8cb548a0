// Summaries over fake run records: no processes involved.
#include <gtest/gtest.h>

#include "summary.h"

namespace mh {
namespace {

RunRecord fake(const std::string& alloc, int rep, int64_t peak, Status st = Status::Ok) {
  RunRecord r;
  r.workload = "w";
  r.allocator.name = alloc;
  r.repetition = rep;
  r.status = st;
  r.peak_rss_kb = peak;
  r.utime_ms = 10;
  r.stime_ms = 5;
  r.workload_metrics["calls"].value = 300;
  r.perf["cycles"].reason = "not supported";
  r.perf["page-faults"].value = 1000 + rep;
  return r;
}

TEST(Summary, GroupsByAllocatorInOrderOfFirstRun) {
  auto rows = summarize_runs({fake("b", 1, 10), fake("a", 1, 20), fake("b", 2, 30)});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].allocator, "b");
  EXPECT_EQ(rows[1].allocator, "a");
  EXPECT_EQ(rows[0].runs_total, 2u);
  EXPECT_DOUBLE_EQ(rows[0].find("peak_rss_kb")->median, 20);
}

TEST(Summary, OnlyOkRunsCount) {
  auto rows = summarize_runs({fake("a", 1, 10), fake("a", 2, 1000, Status::Crashed), fake("a", 3, 30)});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].runs_ok, 2u);
  EXPECT_EQ(rows[0].runs_total, 3u);
  EXPECT_DOUBLE_EQ(rows[0].find("peak_rss_kb")->max, 30);
}

TEST(Summary, WorkloadAndPerfMetricsArePrefixedAndNullsLeftOut) {
  auto rows = summarize_runs({fake("a", 1, 10), fake("a", 2, 10)});
  ASSERT_NE(rows[0].find("workload.calls"), nullptr);
  EXPECT_DOUBLE_EQ(rows[0].find("workload.calls")->median, 300);
  EXPECT_DOUBLE_EQ(rows[0].find("perf.page-faults")->median, 1001.5);
  EXPECT_EQ(rows[0].find("perf.cycles"), nullptr);  // never measured: not a 0
  EXPECT_DOUBLE_EQ(rows[0].find("cpu_ms")->median, 15);
}

TEST(Summary, AllRunsFailedGivesARowWithoutMetrics) {
  auto rows = summarize_runs({fake("a", 1, 10, Status::Timeout)});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].runs_ok, 0u);
  EXPECT_TRUE(rows[0].metrics.empty());
}

}  // namespace
}  // namespace mh
