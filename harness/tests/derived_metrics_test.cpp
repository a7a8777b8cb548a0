// The derived run metrics on hand-made records: no process.
#include "core/derived_metrics.h"

#include <gtest/gtest.h>

#include "core/metrics.h"

namespace mh {
namespace {

Sample rss(double t_ms, int64_t rss_kb, int64_t anon_kb = 0) {
  Sample s;
  s.t_ms = t_ms;
  s.rss_kb = rss_kb;
  s.anon_kb = anon_kb;
  return s;
}

Mark mark(const std::string& name, const Sample& s, std::optional<int64_t> hwm = std::nullopt, bool reset = false) {
  return Mark{s.t_ms, name, s, hwm, reset, {}, {}};
}

TEST(RunMetrics, PeakIsTheLargestSampleAndFinalTheEndMarkElseTheLastSample) {
  RunRecord r;
  r.samples = {rss(0, 100), rss(10, 300), rss(20, 250), rss(30, 200)};
  derive_run_metrics(r);
  EXPECT_EQ(r.peak_rss_kb, 300);
  EXPECT_EQ(r.final_rss_kb, 200);

  r.marks = {mark("start", rss(5, 120)), mark("end", rss(25, 150))};
  derive_run_metrics(r);
  EXPECT_EQ(r.final_rss_kb, 150);
}

TEST(RunMetrics, HwmAndMaxrssAreRaisedToThePhasePeaksOnlyWhereVmHwmWasReset) {
  RunRecord r;
  r.samples = {rss(0, 100)};
  r.hwm_kb.value = 250;  // the workload's reading: its last phase's peak
  r.maxrss_kb = 120;
  r.marks = {mark("grow", rss(10, 400), 500, false), mark("end", rss(20, 100), 250, false)};
  derive_run_metrics(r);
  EXPECT_EQ(*r.hwm_kb.value, 250);  // never reset: the kernel's own figures are the run's
  EXPECT_EQ(r.maxrss_kb, 120);

  r.marks[0].hwm_reset = true;
  derive_run_metrics(r);
  EXPECT_EQ(*r.hwm_kb.value, 500);
  EXPECT_EQ(r.maxrss_kb, 500);
}

TEST(RunMetrics, AnHwmTheWorkloadNeverReportedStaysNull) {
  RunRecord r;
  r.marks = {mark("grow", rss(10, 400), 500, true)};
  derive_run_metrics(r);
  EXPECT_FALSE(r.hwm_kb.value);
  EXPECT_EQ(r.maxrss_kb, 500);
}

TEST(RunMetrics, TheRegistryReadsTheDerivedFields) {
  RunRecord r;
  r.samples = {rss(0, 100, 40), rss(10, 300, 90), rss(20, 200, 60)};
  r.utime_ms = 10;
  r.stime_ms = 5.5;
  derive_run_metrics(r);
  EXPECT_EQ(metric_value(r, "peak_rss_kb"), 300);
  EXPECT_EQ(metric_value(r, "peak_anon_kb"), 90);
  EXPECT_EQ(metric_value(r, "final_rss_kb"), 200);
  EXPECT_EQ(metric_value(r, "cpu_ms"), 15.5);

  RunRecord none;  // no sample could be read: no RSS figures, not 0
  derive_run_metrics(none);
  EXPECT_FALSE(metric_value(none, "peak_rss_kb"));
  EXPECT_FALSE(metric_value(none, "peak_anon_kb"));
  EXPECT_FALSE(metric_value(none, "final_rss_kb"));
}

}  // namespace
}  // namespace mh
