// The RSS curve metrics on hand-made sample series with marks: no process.
#include "core/curve.h"

#include <gtest/gtest.h>

#include "core/metrics.h"

namespace mh {
namespace {

Sample at(double t_ms, int64_t rss_kb, int64_t minflt = 0) {
  Sample s;
  s.t_ms = t_ms;
  s.rss_kb = rss_kb;
  s.anon_kb = rss_kb / 2;
  s.minflt = minflt;
  return s;
}

Mark mark(const std::string& name, const Sample& s, std::optional<int64_t> hwm = std::nullopt, bool reset = false) {
  return Mark{s.t_ms, name, s, hwm, reset, {}, {}};
}

const Maybe& get(const RunRecord& r, const std::string& name) {
  for (const auto& [n, m] : r.curve)
    if (n == name) return m;
  static const Maybe missing{std::nullopt, "no such metric in the record"};
  ADD_FAILURE() << "no " << name;
  return missing;
}

double value(const RunRecord& r, const std::string& name) {
  const Maybe& m = get(r, name);
  EXPECT_TRUE(m.value) << name << ": " << m.reason;
  return m.value.value_or(-1);
}

// 10 MB held from 0 to 1000 ms: 10 MB*s... in KiB: 10000 kB -> 10.24 MB over 1 s.
TEST(Curve, AreaOfAFlatCurveIsLevelTimesDuration) {
  RunRecord r;
  for (int t = 0; t <= 1000; t += 10) r.samples.push_back(at(t, 10000));
  compute_curve(r, "", "");
  EXPECT_NEAR(value(r, "rss_area_mb_s"), 10.24, 1e-9);
  EXPECT_NEAR(value(r, "phase.launch.area_mb_s"), 10.24, 1e-9);  // no marks: one phase
}

// A ramp from 0 to 1000 kB over 1 s is a triangle: half of 1.024 MB*s; the
// phases split it at the mark (read between samples).
TEST(Curve, AreasOfPhasesAddUpToTheRunAndSplitBetweenSamples) {
  RunRecord r;
  for (int t = 0; t <= 1000; t += 100) r.samples.push_back(at(t, t));
  r.marks.push_back(mark("half", at(550, 550)));  // between two samples
  compute_curve(r, "", "");
  const double run = value(r, "rss_area_mb_s"), a = value(r, "phase.launch.area_mb_s"),
               b = value(r, "phase.half.area_mb_s");
  EXPECT_NEAR(run, 0.512, 1e-9);
  EXPECT_NEAR(a, 0.55 * 0.55 / 2 * 1.024, 1e-3);
  EXPECT_NEAR(a + b, run, 2e-3);  // each rounded to a thousandth
}

// VmHWM read at a mark is the peak of the phase it closes when the previous
// mark reset it; otherwise the sampled maximum stands, and the record says which.
TEST(Curve, PhasePeaksComeFromVmHWMWhereItWasResetElseFromTheSamples) {
  RunRecord r;
  r.samples = {at(0, 1000), at(10, 5000), at(20, 2000), at(30, 2000), at(40, 3000), at(50, 1000)};
  r.marks.push_back(mark("a", at(20, 2000), 9000, true));   // launch..a: the kernel saw 9000
  r.marks.push_back(mark("b", at(40, 3000), 7000, false));  // a..b: reset at a, so 7000
  // b..c: b did not reset, so c's VmHWM (since a) is not this phase's peak.
  r.marks.push_back(mark("c", at(50, 1000), 8000, true));
  compute_curve(r, "", "");
  EXPECT_EQ(value(r, "phase.launch.peak_rss_kb"), 9000);
  EXPECT_EQ(value(r, "phase.a.peak_rss_kb"), 7000);
  EXPECT_EQ(value(r, "phase.b.peak_rss_kb"), 3000);  // sampled
  const Json& phases = r.curve_info["phases"];
  ASSERT_EQ(phases.size(), 4u);
  EXPECT_EQ(phases[0]["peak_from"], "VmHWM");
  EXPECT_EQ(phases[1]["peak_from"], "VmHWM");
  EXPECT_EQ(phases[2]["peak_from"], "sampled maximum");
  EXPECT_EQ(phases[3]["name"], "c");
}

TEST(Curve, FaultsPerPhaseAreTheDifferenceBetweenMarks) {
  RunRecord r;
  r.samples = {at(0, 100, 0), at(10, 100, 40), at(20, 100, 100)};
  r.marks.push_back(mark("a", at(10, 100, 40)));
  r.minflt = 130;  // wait4's total: the last phase ends there
  compute_curve(r, "", "");
  EXPECT_EQ(value(r, "phase.launch.minflt"), 40);
  EXPECT_EQ(value(r, "phase.a.minflt"), 90);
}

// 100 MB above a start of 10 MB at the mark, falling linearly by 1 MB per 10 ms:
// half is given back at 500 ms, 90% at 900 ms (read between samples).
TEST(Curve, TimesToGiveBackHalfAndNinetyPercent) {
  RunRecord r;
  r.samples.push_back(at(0, 10000));
  r.marks.push_back(mark("start", at(5, 10000)));
  for (int t = 0; t <= 1200; t += 40) r.samples.push_back(at(1000 + t, std::max(10000, 110000 - t * 100)));
  r.marks.push_back(mark("freed", at(1000, 110000)));
  compute_curve(r, "freed", "");
  EXPECT_NEAR(value(r, "after.ms_to_half"), 500, 1e-6);
  EXPECT_NEAR(value(r, "after.ms_to_90pct"), 900, 1e-6);
  EXPECT_NEAR(value(r, "after.rss_100ms_kb"), 100000, 1e-6);
  EXPECT_NEAR(value(r, "after.rss_1s_kb"), 10000, 1e-6);
  EXPECT_FALSE(get(r, "after.rss_10s_kb").value);
  EXPECT_NE(get(r, "after.rss_10s_kb").reason.find("ended 1200 ms after the mark 'freed'"), std::string::npos)
      << get(r, "after.rss_10s_kb").reason;
  EXPECT_EQ(r.curve_info["after"]["start_from"], "the start mark");
  EXPECT_EQ(r.curve_info["after"]["chosen_by"], "--after");
}

TEST(Curve, MemoryNeverGivenBackIsNullWithTheReason) {
  RunRecord r;
  r.samples = {at(0, 10000), at(100, 60000)};
  r.marks.push_back(mark("start", at(0, 10000)));
  r.marks.push_back(mark("idle", at(100, 60000)));
  for (int t = 110; t <= 600; t += 10) r.samples.push_back(at(t, 40000));  // 40% of the 50 MB above the start back
  compute_curve(r, "", "idle");
  for (const char* name : {"after.ms_to_half", "after.ms_to_90pct"}) {
    const Maybe& m = get(r, name);
    EXPECT_FALSE(m.value) << name;
    EXPECT_NE(m.reason.find("never came down"), std::string::npos) << m.reason;
    EXPECT_NE(m.reason.find("in the 500 ms after the mark 'idle'"), std::string::npos) << m.reason;
  }
  EXPECT_EQ(r.curve_info["after"]["chosen_by"], "the workload's idle mark");
}

TEST(Curve, NothingAboveTheStartIsGivenBackAtOnce) {
  RunRecord r;
  r.samples = {at(0, 10000), at(10, 9000), at(20, 9000)};
  r.marks.push_back(mark("start", at(0, 10000)));
  r.marks.push_back(mark("freed", at(10, 9000)));
  compute_curve(r, "", "freed");
  EXPECT_EQ(value(r, "after.ms_to_half"), 0);
  EXPECT_EQ(value(r, "after.ms_to_90pct"), 0);
}

TEST(Curve, AnAbsentMarkNamesTheMarksThereAre) {
  RunRecord r;
  r.samples = {at(0, 10000), at(10, 9000)};
  r.marks.push_back(mark("start", at(0, 10000)));
  r.marks.push_back(mark("end", at(10, 9000)));
  compute_curve(r, "idel", "");
  const Maybe& m = get(r, "after.rss_1s_kb");
  EXPECT_FALSE(m.value);
  EXPECT_NE(m.reason.find("no mark 'idel' (--after) in this run; its marks: start, end"), std::string::npos) << m.reason;
  EXPECT_TRUE(get(r, "rss_area_mb_s").value);  // the rest is still measured
}

TEST(Curve, WithoutADeclaredMarkTheLastMarkIsUsed) {
  RunRecord r;
  r.samples = {at(0, 10000), at(10, 9000), at(200, 9000)};
  r.marks.push_back(mark("a", at(0, 10000)));
  r.marks.push_back(mark("b", at(10, 9000)));
  compute_curve(r, "", "");
  EXPECT_EQ(r.curve_info["after"]["mark"], "b");
  EXPECT_EQ(r.curve_info["after"]["chosen_by"], "the last mark");
  EXPECT_EQ(r.curve_info["after"]["start_from"], "the first sample");
  EXPECT_NEAR(value(r, "after.rss_100ms_kb"), 9000, 1e-9);
}

TEST(Curve, RepeatedMarksNameTheirPhasesInTurnAndTheirNumberIsCapped) {
  std::vector<Mark> marks;
  for (int i = 0; i < 40; ++i) marks.push_back(mark("turn", at(i, 100)));
  auto names = phase_names(marks);
  ASSERT_EQ(names.size(), kMaxPhases);
  EXPECT_EQ(names[0], "launch");
  EXPECT_EQ(names[1], "turn");
  EXPECT_EQ(names[2], "turn#2");
  RunRecord r;
  r.marks = marks;
  r.samples = {at(0, 100), at(100, 100)};
  compute_curve(r, "", "");
  EXPECT_EQ(r.curve_info["phases"].size(), kMaxPhases);
  EXPECT_EQ(r.curve_info["phases"].back()["end_ms"], 100);  // the last phase runs to the end
  EXPECT_TRUE(r.curve_info.contains("phases_note"));
}

TEST(Curve, NoSamplesNoFigures) {
  RunRecord r;
  compute_curve(r, "", "");
  EXPECT_FALSE(get(r, "rss_area_mb_s").value);
  EXPECT_EQ(get(r, "rss_area_mb_s").reason, "no sample of the process could be read");
  EXPECT_FALSE(get(r, "after.ms_to_half").value);
}

// Every curve metric the computation makes is named by the registry, which
// is what gives it a unit and a rule.
TEST(Curve, EveryCurveMetricIsInTheRegistry) {
  RunRecord r;
  r.samples = {at(0, 100), at(50, 200), at(100, 100)};
  r.marks.push_back(mark("start", at(10, 100)));
  r.marks.push_back(mark("x", at(50, 200)));
  compute_curve(r, "", "");
  ASSERT_GT(r.curve.size(), 10u);
  for (const auto& [name, m] : r.curve) {
    const MetricSpec* spec = find_metric(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_EQ(spec->get, nullptr) << name;
  }
}

}  // namespace
}  // namespace mh
