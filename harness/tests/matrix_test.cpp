// The allocator matrix over hand-made run records: the ratio to the row's
// best, its inverse where higher is better, a zero best, runs that never came,
// two reports' runs pooled, the best in bold. No processes involved.
#include <gtest/gtest.h>

#include "core/derived_metrics.h"
#include "report/matrix.h"

namespace mh {
namespace {

RunRecord run(const std::string& workload, const std::string& alloc, int rep, int64_t peak_kb) {
  RunRecord r;
  r.workload = workload;
  r.allocator.name = alloc;
  r.repetition = rep;
  r.status = Status::Ok;
  r.peak_rss_kb = peak_kb;
  r.samples.push_back(Sample{});
  r.utime_ms = 10;
  derive_anon_peak_and_cpu(r);
  return r;
}

Maybe figure(double v) {
  Maybe m;
  m.value = v;
  return m;
}
// A time that never came within the run, which had `bound` ms left.
Maybe never_by(double bound) {
  Maybe m;
  m.above = bound;
  return m;
}

RunRecord with(RunRecord r, const std::string& name, Maybe v) {
  r.workload_metrics[name] = v;
  return r;
}

const MatrixRow& row_of(const Matrix& m, const std::string& workload, const std::string& metric) {
  for (const auto& t : m.tables)
    for (const auto& r : t.rows)
      if (r.workload == workload && r.figure.metric == metric) return r;
  throw std::runtime_error("no row " + workload + " " + metric);
}

TEST(Matrix, EachCellIsItsMedianOverTheBestOfTheRow) {
  std::vector<RunRecord> runs;
  for (int i = 1; i <= 3; ++i) {
    runs.push_back(run("w", "a", i, 137000 + i));
    runs.push_back(run("w", "b", i, 100000 + i));
  }
  const Matrix m = allocator_matrix(runs, {}, {"peak_rss_kb"});
  const MatrixRow& row = row_of(m, "w", "peak_rss_kb");
  EXPECT_EQ(row.best_allocator, "b");
  EXPECT_TRUE(row.cells[1].best);
  EXPECT_FALSE(row.cells[0].best);
  EXPECT_EQ(row.cells[1].text, "1.00");
  EXPECT_NEAR(row.cells[0].ratio->ratio, 137002.0 / 100002.0, 1e-9);
  EXPECT_EQ(row.cells[0].text.substr(0, 4), "1.37");
  EXPECT_NE(row.cells[0].text.find(" (1.37-1.37)"), std::string::npos) << row.cells[0].text;
  EXPECT_EQ(row.best_text, "102 (102-102) MB");
}

TEST(Matrix, HigherIsBetterIsTheInverse) {
  std::vector<RunRecord> runs;
  for (int i = 1; i <= 3; ++i) {
    runs.push_back(with(run("w", "slow", i, 1000), "rps", figure(100.0 + i)));
    runs.push_back(with(run("w", "fast", i, 1000), "rps", figure(200.0 + i)));
  }
  DeclaredMetrics declared;
  declared["w"]["rps"] = {"/s", "higher", "requests per second"};
  const Matrix m = allocator_matrix(runs, {}, {"workload.rps"}, declared);
  const MatrixRow& row = row_of(m, "w", "workload.rps");
  EXPECT_EQ(row.best_allocator, "fast");
  EXPECT_NEAR(row.cells[0].ratio->ratio, 202.0 / 102.0, 1e-9);
  EXPECT_GT(*row.cells[0].ratio->lo, 1.0);
  EXPECT_TRUE(m.higher);
  EXPECT_NE(matrix_notes(m, "").find("higher is better: the cell is the inverse"), std::string::npos);
}

TEST(Matrix, AZeroBestShowsFiguresNotRatios) {
  std::vector<RunRecord> runs;
  for (int i = 1; i <= 3; ++i) {
    runs.push_back(with(run("w", "none", i, 1000), "held_kb", figure(0.0)));
    runs.push_back(with(run("w", "some", i, 1000), "held_kb", figure(2000.0)));
  }
  DeclaredMetrics declared;
  declared["w"]["held_kb"] = {"KiB", "lower", "held"};
  const Matrix m = allocator_matrix(runs, {}, {"workload.held_kb"}, declared);
  const MatrixRow& row = row_of(m, "w", "workload.held_kb");
  EXPECT_EQ(row.cells[0].text, "1.00");
  EXPECT_TRUE(row.cells[1].zero);
  EXPECT_FALSE(row.cells[1].ratio);
  EXPECT_EQ(row.cells[1].text, "2.05 (2.05-2.05) MB");
  EXPECT_TRUE(m.zero);
  EXPECT_NE(matrix_notes(m, "").find("the best is 0"), std::string::npos);
}

TEST(Matrix, AHigherIsBetterCellBelowZeroShowsItsFigure) {
  std::vector<RunRecord> runs;
  for (int i = 1; i <= 3; ++i) {
    runs.push_back(with(run("w", "dropped", i, 1000), "drop_kb", figure(5000.0)));
    runs.push_back(with(run("w", "grew", i, 1000), "drop_kb", figure(-8.0)));
  }
  DeclaredMetrics declared;
  declared["w"]["drop_kb"] = {"KiB", "higher", "RSS drop"};
  const Matrix m = allocator_matrix(runs, {}, {"workload.drop_kb"}, declared);
  const MatrixRow& row = row_of(m, "w", "workload.drop_kb");
  EXPECT_EQ(row.best_allocator, "dropped");
  EXPECT_FALSE(row.cells[1].ratio);
  EXPECT_EQ(row.cells[1].text, "-0.00819 (-0.00819--0.00819) MB");
}

TEST(Matrix, NeverCellsAreLowerBoundsAndNeverAgainstNever) {
  std::vector<RunRecord> runs;
  for (int i = 1; i <= 3; ++i) {
    runs.push_back(with(run("w", "back", i, 1000), "ms_back", figure(100.0)));
    runs.push_back(with(run("w", "held", i, 1000), "ms_back", never_by(3000.0)));
  }
  DeclaredMetrics declared;
  declared["w"]["ms_back"] = {"ms", "lower", "time back"};
  Matrix m = allocator_matrix(runs, {}, {"workload.ms_back"}, declared);
  const MatrixRow& row = row_of(m, "w", "workload.ms_back");
  EXPECT_EQ(row.best_allocator, "back");
  EXPECT_EQ(row.cells[1].text, "> 30.0");
  EXPECT_TRUE(m.never);
  // Nobody came back: the best is a bound, every other cell "never".
  std::vector<RunRecord> held;
  for (int i = 1; i <= 3; ++i) {
    held.push_back(with(run("w", "x", i, 1000), "ms_back", never_by(3000.0)));
    held.push_back(with(run("w", "y", i, 1000), "ms_back", never_by(2900.0)));
  }
  m = allocator_matrix(held, {}, {"workload.ms_back"}, declared);
  const MatrixRow& r2 = row_of(m, "w", "workload.ms_back");
  EXPECT_EQ(r2.best_text, "> 2900 ms (never)");
  EXPECT_EQ(r2.cells[0].text, "never");
  EXPECT_EQ(r2.cells[1].text, "never");  // the shortest bound is no best
  EXPECT_FALSE(r2.cells[1].best);
  EXPECT_EQ(matrix_markdown(m).find("**"), std::string::npos);
  EXPECT_NE(matrix_text(m).find("none came: > 2900 ms (never)"), std::string::npos);
}

TEST(Matrix, TwoReportsOfOneCellArePooled) {
  // Two sittings: a's three runs in one, three more in the other; the cell is the median of all six.
  std::vector<RunRecord> runs;
  for (int i = 1; i <= 3; ++i) runs.push_back(run("w", "a", i, 1000 * i));
  for (int i = 1; i <= 3; ++i) runs.push_back(run("w", "a", i, 10000 * i));
  for (int i = 1; i <= 3; ++i) runs.push_back(run("w", "b", i, 1000));
  const Matrix m = allocator_matrix(runs, {}, {"peak_rss_kb"});
  const MatrixRow& row = row_of(m, "w", "peak_rss_kb");
  ASSERT_TRUE(row.cells[0].figures);
  EXPECT_EQ(row.cells[0].figures->n, 6u);
  EXPECT_DOUBLE_EQ(row.cells[0].figures->median, (3000 + 10000) / 2.0);
}

TEST(Matrix, DefaultFiguresAreHeadlinesElsePeakRssAndCpu) {
  std::vector<RunRecord> runs;
  for (int i = 1; i <= 2; ++i)
    for (const char* a : {"a", "b"}) {
      runs.push_back(with(run("idle", a, i, 1000), "ms_back", figure(10.0 * i)));
      runs.push_back(run("burst", a, i, 2000));
    }
  HeadlinesByWorkload heads;
  heads["idle"] = {{"workload.ms_back", "time back", "ms", "lower"}};
  const Matrix m = allocator_matrix(runs, heads);
  EXPECT_NO_THROW(row_of(m, "idle", "workload.ms_back"));
  EXPECT_THROW(row_of(m, "idle", "peak_rss_kb"), std::runtime_error);
  EXPECT_NO_THROW(row_of(m, "burst", "peak_rss_kb"));
  EXPECT_NO_THROW(row_of(m, "burst", "cpu_ms"));
  // --metric of a headline figure keeps the workload's title for it.
  EXPECT_EQ(row_of(allocator_matrix(runs, heads, {"workload.ms_back"}), "idle", "workload.ms_back").figure.title,
            "time back");
}

TEST(Matrix, MarkdownBoldsTheBestAndTheTextDoesNot) {
  std::vector<RunRecord> runs;
  for (int i = 1; i <= 3; ++i) {
    runs.push_back(run("w", "a", i, 2000));
    runs.push_back(run("w", "b", i, 1000));
  }
  const Matrix m = allocator_matrix(runs, {}, {"peak_rss_kb"});
  const std::string md = matrix_markdown(m);
  EXPECT_NE(md.find("| **1.00** |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2.00 (2.00-2.00) |"), std::string::npos) << md;
  EXPECT_EQ(matrix_text(m).find("**"), std::string::npos);
}

TEST(Matrix, AFigureWithoutADirectionHasNoBest) {
  std::vector<RunRecord> runs;
  for (int i = 1; i <= 3; ++i) {
    runs.push_back(with(run("w", "a", i, 1000), "rps", figure(100.0)));
    runs.push_back(with(run("w", "b", i, 1000), "rps", figure(200.0)));
  }
  const Matrix m = allocator_matrix(runs, {}, {"workload.rps"});  // declared nowhere: no direction
  const MatrixRow& row = row_of(m, "w", "workload.rps");
  EXPECT_FALSE(row.cells[0].best);
  EXPECT_EQ(row.cells[1].text.substr(0, 4), "2.00");
  EXPECT_TRUE(m.undirected);
  EXPECT_EQ(matrix_markdown(m).find("**"), std::string::npos);
}

TEST(Matrix, UnknownMetricIsNamedWithTheValidOnes) {
  const std::vector<RunRecord> runs = {run("w", "a", 1, 1000)};
  EXPECT_EQ(check_matrix_metrics(runs, {"peak_rss_kb"}), "");
  const std::string e = check_matrix_metrics(runs, {"peak_rs_kb"});
  EXPECT_NE(e.find("--metric peak_rs_kb"), std::string::npos);
  EXPECT_NE(e.find("peak_rss_kb"), std::string::npos);
}

}  // namespace
}  // namespace mh
