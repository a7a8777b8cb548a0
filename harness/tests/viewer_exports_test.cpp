// The exports other viewers open, on hand-made records: the Chrome trace's
// processes, counters and marks, and the pprof profile's object estimate.
#include <gtest/gtest.h>

#include <cmath>

#include "report/pprof_export.h"
#include "report/trace_export.h"

namespace mh {
namespace {

TEST(PprofObjects, BlocksOfOneSizeAreCountedBack) {
  // n sampled blocks of s bytes at interval I stand for n / p(s) blocks,
  // n * s / p(s) bytes (p(s) = 1 - exp(-s/I)).
  for (double s : {64.0, 4096.0, 262144.0, 8e6}) {
    const double interval = 65536, n = 40, p = -std::expm1(-s / interval);
    EXPECT_NEAR(estimated_objects(n * s / p, int64_t(n), uint64_t(interval)), n / p, 1e-6 * n / p) << s;
  }
  EXPECT_EQ(estimated_objects(0, 0, 65536), 0);
  // Bytes over samples below the interval (blocks under one byte): at least a byte each.
  EXPECT_DOUBLE_EQ(estimated_objects(1000, 1, 65536), 1000);
}

TEST(ChromeTrace, AProcessPerRunCountersAndMarks) {
  ReportData report;
  for (int rep = 1; rep <= 2; ++rep) {
    RunRecord r;
    r.workload = "w";
    r.allocator.name = "glibc";
    r.repetition = rep;
    r.status = Status::Ok;
    for (int i = 0; i < 3; ++i) {
      Sample s;
      s.t_ms = 10.0 * i;
      s.rss_kb = 1000 * (i + 1);
      s.minflt = i;
      r.samples.push_back(s);
    }
    r.samples[1].missing = column_bit("rss_kb");
    Mark m;
    m.t_ms = 15;
    m.name = "done";
    r.marks.push_back(m);
    report.runs.push_back(r);
  }
  const Json trace = Json::parse(chrome_trace(report));
  int processes = 0, rss = 0, heap = 0, marks = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      ++processes;
      EXPECT_EQ(e["args"]["name"], "w glibc run " + std::to_string(e["pid"].get<int>()));
    }
    if (e["ph"] == "C" && e["name"] == "RSS") {
      ++rss;
      EXPECT_NE(e["ts"].get<double>(), 10000.0);  // the sample without RSS is left out
    }
    if (e["ph"] == "C" && e["name"] == "live heap") ++heap;
    if (e["ph"] == "i") {
      ++marks;
      EXPECT_EQ(e["s"], "p");
      EXPECT_EQ(e["ts"].get<double>(), 15000.0);  // microseconds
    }
  }
  EXPECT_EQ(processes, 2);
  EXPECT_EQ(rss, 4);
  EXPECT_EQ(heap, 0);  // no ledger
  EXPECT_EQ(marks, 2);
}

}  // namespace
}  // namespace mh
