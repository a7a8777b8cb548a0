// Summaries over fake run records: no processes involved.
#include <gtest/gtest.h>

#include <sstream>

#include "report/summary_table.h"
#include "core/derived_metrics.h"
#include "core/summary.h"

namespace mh {
namespace {

RunRecord fake(const std::string& alloc, int rep, int64_t peak, Status st = Status::Ok) {
  RunRecord r;
  r.workload = "w";
  r.allocator.name = alloc;
  r.repetition = rep;
  r.status = st;
  r.peak_rss_kb = peak;
  r.samples.push_back(Sample{});  // a run without samples has no RSS figures
  r.utime_ms = 10;
  r.stime_ms = 5;
  derive_anon_peak_and_cpu(r);  // cpu_ms
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

namespace mh {
namespace {

// pool-idle under glibc, as the issue measured it: little RSS left at exit
// (4.7 MB, after the teardown) but 127.7 MB of excess anonymous memory at the
// reading that is the workload's result; scav the other way round.
RunRecord pool_idle(const std::string& alloc, double excess_kb, int64_t exit_kb) {
  RunRecord r;
  r.workload = "pool-idle";
  r.allocator.name = alloc;
  r.repetition = 1;
  r.status = Status::Ok;
  r.peak_rss_kb = 150000;
  r.final_rss_kb = exit_kb;
  r.samples.push_back(Sample{});
  r.workload_metrics["excess_anon_kb"].value = excess_kb;
  return r;
}

TEST(SummaryTable, TheWorkloadsHeadlineComesFirstWithItsUnitAndRanksTheRows) {
  const std::vector<Headline> heads = {{"workload.excess_anon_kb", "excess anon", "KiB", "lower"}};
  std::string t = summary_table({pool_idle("glibc", 124707, 4590), pool_idle("scav", 684, 19531)},
                                {{"pool-idle", heads}});
  std::istringstream lines(t);
  std::string header, rule, first, second;
  std::getline(lines, header);
  std::getline(lines, rule);
  std::getline(lines, first);
  std::getline(lines, second);
  // Headline, then the generic columns, RSS at exit last: it cannot be read as the result.
  const auto excess = header.find("excess anon MB"), peak = header.find("peak RSS MB"),
             exit = header.find("RSS at exit MB");
  ASSERT_NE(excess, std::string::npos) << t;
  ASSERT_NE(exit, std::string::npos) << t;
  EXPECT_LT(excess, peak);
  EXPECT_LT(peak, exit);
  EXPECT_EQ(header.find("final RSS"), std::string::npos) << t;
  // Ranked by the headline (lower is better), not by the order of the runs.
  EXPECT_NE(first.find("scav"), std::string::npos) << t;
  EXPECT_NE(first.find("0.700"), std::string::npos) << t;
  EXPECT_NE(second.find("glibc"), std::string::npos) << t;
  EXPECT_NE(second.find("128"), std::string::npos) << t;
}

TEST(SummaryTable, AWorkloadWithoutHeadlineKeepsTheRunOrder) {
  std::string t = summary_table({fake("b", 1, 10), fake("a", 1, 20)});
  EXPECT_LT(t.find("b  "), t.find("a  ")) << t;
  EXPECT_NE(t.find("RSS at exit MB"), std::string::npos) << t;
}

}  // namespace
}  // namespace mh

// The run table as a newcomer reads it: one number rule, a time that never
// came said so, no column nothing measured, a width a terminal shows, a ratio
// to a reference, and a word where the ledger's figures mislead.
#include <algorithm>

#include "core/cells.h"
#include "core/ledger_notes.h"

namespace mh {
namespace {

// idle-return as it reads: RSS at the idle end, the time to give memory back
// (never, for an allocator that keeps it: the bound is the time the run had left).
RunRecord idle(const std::string& alloc, int rep, double end_kb, std::optional<double> back_ms) {
  RunRecord r;
  r.workload = "idle-return";
  r.allocator.name = alloc;
  r.repetition = rep;
  r.status = Status::Ok;
  r.peak_rss_kb = 73000 + rep;
  r.final_rss_kb = int64_t(end_kb);
  r.samples.push_back(Sample{});
  r.minflt = 17127 + rep;
  r.wall_ms = 830 + rep;
  r.utime_ms = 200 + rep;
  r.stime_ms = 80;
  derive_anon_peak_and_cpu(r);
  r.workload_metrics["rss_idle_end_kb"].value = end_kb + rep;
  r.curve.push_back({"after.ms_to_start", back_ms ? Maybe{back_ms, ""} : Maybe{std::nullopt, "never", 3002.0 + rep}});
  r.curve.push_back({"after.ms_to_90pct", back_ms ? Maybe{*back_ms - 4, ""} : Maybe{std::nullopt, "never", 3001.0 + rep}});
  return r;
}

const HeadlinesByWorkload kIdleHeads = {
    {"idle-return",
     {{"workload.rss_idle_end_kb", "RSS at idle end", "KiB", "lower"},
      {"after.ms_to_start", "back to start+tolerance after", "ms", "lower"},
      {"after.ms_to_90pct", "90% given back after", "ms", "lower"}}}};

std::vector<RunRecord> idle_runs() {
  std::vector<RunRecord> runs;
  for (int rep = 1; rep <= 3; ++rep) {
    runs.push_back(idle("glibc", rep, 37000, std::nullopt));
    runs.push_back(idle("jemalloc", rep, 65300, std::nullopt));
    runs.push_back(idle("scav", rep, 5160, 120.0 + rep));
  }
  return runs;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string line_with(const std::string& text, const std::string& word) {
  for (const auto& l : lines_of(text))
    if (l.find(word) != std::string::npos && l.find("idle-return") == 0) return l;
  return "";
}

TEST(SummaryTable, ATimeThatNeverCameIsSaidSoNotADash) {
  const std::string t = summary_table(idle_runs(), kIdleHeads);
  const std::string glibc = line_with(t, "glibc");
  EXPECT_NE(glibc.find("> 3000 ms (never)"), std::string::npos) << t;
  EXPECT_EQ(glibc.find(" - "), std::string::npos) << t;
  EXPECT_NE(t.find("never: the time did not come"), std::string::npos) << t;
  // scav gave its memory back: a figure, and it ranks first.
  EXPECT_NE(line_with(t, "scav").find("122 (121-123)"), std::string::npos) << t;
}

TEST(SummaryTable, SomeRunsNeverSayHowMany) {
  auto runs = idle_runs();
  runs.push_back(idle("scav", 4, 5160, std::nullopt));
  runs.push_back(idle("scav", 5, 5160, std::nullopt));
  const std::string t = summary_table(runs, kIdleHeads, {.reference = "", .wide = true});
  EXPECT_NE(line_with(t, "scav").find(", 2 never)"), std::string::npos) << t;
}

TEST(SummaryTable, NoColumnThatNoRunMeasured) {
  const std::string t = summary_table(idle_runs(), kIdleHeads, {.reference = "", .wide = true});
  EXPECT_EQ(t.find("peak live heap"), std::string::npos) << t;
  for (const auto& l : lines_of(t))
    if (l.find("idle-return") == 0) {
      EXPECT_EQ(l.find("  -"), std::string::npos) << l;
    }
}

TEST(SummaryTable, EveryCellOnePrecisionWithItsRange) {
  // 31.0 beside 17.5 and 31.2: one precision, not "31 (17.5-31.2)"; a range of
  // equal figures is still shown, not dropped.
  EXPECT_EQ(figures_cell({31.0, 17.5, 31.2, 3, 0, false}, {"MB", 1}), "31.0 (17.5-31.2)");
  EXPECT_EQ(figures_cell({14.0, 14.0, 14.0, 3, 0, false}, {"MB", 1}), "14.0 (14.0-14.0)");
  EXPECT_EQ(figures_cell({17128, 17127, 17131, 3, 0, false}, {"", 1}), "17100 (17100-17100)");
  EXPECT_EQ(number_text(0.4381), "0.438");
  EXPECT_EQ(number_text(9.996), "10.0");
  EXPECT_EQ(number_text(5.3), "5.30");
  const std::string t = summary_table(idle_runs(), kIdleHeads);
  EXPECT_NE(line_with(t, "jemalloc").find("74.8 (74.8-74.8)"), std::string::npos) << t;  // peak RSS
}

TEST(SummaryTable, FitsA160ColumnTerminalUnlessWide) {
  auto runs = idle_runs();
  const std::string t = summary_table(runs, kIdleHeads);
  for (const auto& l : lines_of(t))
    if (l.find("idle-return") == 0 || l.find("---") == 0) {
      EXPECT_LE(l.size(), 160u) << l;
    }
  EXPECT_NE(t.find("--wide shows every column"), std::string::npos) << t;
  const std::string wide = summary_table(runs, kIdleHeads, {.reference = "", .wide = true});
  EXPECT_NE(wide.find("minor faults"), std::string::npos) << wide;
  EXPECT_EQ(wide.find("--wide shows"), std::string::npos) << wide;
}

TEST(SummaryTable, ARatioToTheReferenceAndAnUnknownReferenceNamesTheValidOnes) {
  const std::string t = summary_table(idle_runs(), kIdleHeads);  // reference: the first allocator, glibc
  EXPECT_NE(t.find("ratio to glibc"), std::string::npos) << t;
  EXPECT_NE(line_with(t, "glibc").find("1.00"), std::string::npos) << t;
  // scav's RSS at the idle end over glibc's: 5162/37002, its interval of the bootstrap.
  EXPECT_NE(line_with(t, "scav").find("0.140 (0.139-0.140)"), std::string::npos) << t;
  const std::string by_scav = summary_table(idle_runs(), kIdleHeads, {.reference = "scav"});
  EXPECT_NE(by_scav.find("ratio to scav"), std::string::npos) << by_scav;
  EXPECT_NE(line_with(by_scav, "jemalloc").find("12.7"), std::string::npos) << by_scav;
  const std::string err = check_reference(idle_runs(), "jemaloc");
  EXPECT_NE(err.find("jemaloc"), std::string::npos) << err;
  EXPECT_NE(err.find("glibc, jemalloc, scav"), std::string::npos) << err;
  EXPECT_EQ(check_reference(idle_runs(), "scav"), "");
}

RunRecord ledger_run(const std::string& program, double live_kb, int64_t anon_kb) {
  RunRecord r;
  r.workload = program;
  r.allocator.name = "glibc";
  r.repetition = 1;
  r.status = Status::Ok;
  r.params = Json{{"command", Json::array({program, "x"})}, {"path", "/usr/bin/" + program}};
  Sample s;
  s.rss_kb = anon_kb + 5000;
  s.anon_kb = anon_kb;
  r.samples.push_back(s);
  r.peak_rss_kb = anon_kb + 5000;
  derive_anon_peak_and_cpu(r);
  r.curve.push_back({"peak_heap_live_kb", Maybe{live_kb, ""}});
  return r;
}

TEST(SummaryTable, ALiveHeapAboveTheAnonymousRssIsExplained) {
  // sort's buffer: allocated, barely touched.
  const std::string t = summary_table({ledger_run("sort", 945000, 142000)});
  EXPECT_NE(t.find("note (live_not_resident): sort under glibc"), std::string::npos) << t;
  EXPECT_NE(t.find("never touched"), std::string::npos) << t;
  EXPECT_EQ(t.find("pymalloc"), std::string::npos) << t;
}

TEST(SummaryTable, APythonProgramsSmallLiveHeapNamesPymalloc) {
  const std::string t = summary_table({ledger_run("python3", 17000, 135000)});
  EXPECT_NE(t.find("note (pymalloc): python3 under glibc"), std::string::npos) << t;
  EXPECT_NE(t.find("--env PYTHONMALLOC=malloc"), std::string::npos) << t;
  // Not for a program that is not Python, nor for one already without pymalloc.
  EXPECT_EQ(summary_table({ledger_run("node", 17000, 135000)}).find("note ("), std::string::npos);
  auto off = ledger_run("python3", 17000, 135000);
  off.params["env"] = Json{{"PYTHONMALLOC", "malloc"}};
  EXPECT_EQ(summary_table({off}).find("note ("), std::string::npos);
}

}  // namespace
}  // namespace mh
