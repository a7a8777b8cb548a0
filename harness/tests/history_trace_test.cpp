// A run's trace as the history store keeps it: a long series cut to at most
// kMaxTracePoints samples that keep the first, the last, the peak and the
// trough; a cell not read stays none; the marks past kMaxTraceMarks left out;
// and the trace read back from a store as it was added, once.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "history/from_report.h"
#include "history/store.h"

namespace mh::history {
namespace {

// `n` samples 10 ms apart of a slow wave between 10 and 20 MB, with one
// spike at `peak` and one dip at `trough`.
std::vector<Sample> wave(size_t n, size_t peak, size_t trough) {
  std::vector<Sample> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i].t_ms = 10.0 * double(i) + 0.04;
    out[i].rss_kb = 15000 + int64_t(i % 200 < 100 ? i % 100 : 100 - i % 100) * 50;
    out[i].anon_kb = out[i].rss_kb - 3000;
  }
  out[peak].rss_kb = 90000;
  out[trough].rss_kb = 100;
  return out;
}

TEST(HistoryTrace, ALongSeriesKeepsItsEndsItsPeakAndItsTrough) {
  const auto samples = wave(20000, 12345, 777);
  const auto kept = kept_samples(samples, kMaxTracePoints);
  EXPECT_LE(kept.size(), kMaxTracePoints);
  EXPECT_GE(kept.size(), kMaxTracePoints - 2);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  EXPECT_EQ(std::adjacent_find(kept.begin(), kept.end()), kept.end());  // each sample once
  EXPECT_EQ(kept.front(), 0u);
  EXPECT_EQ(kept.back(), samples.size() - 1);
  for (size_t i : {size_t(12345), size_t(777)})
    EXPECT_NE(std::find(kept.begin(), kept.end(), i), kept.end()) << i;
}

TEST(HistoryTrace, AShortSeriesIsKeptWhole) {
  const auto samples = wave(kMaxTracePoints, 3, 5);
  EXPECT_EQ(kept_samples(samples, kMaxTracePoints).size(), kMaxTracePoints);
  EXPECT_TRUE(kept_samples({}, kMaxTracePoints).empty());
}

TEST(HistoryTrace, ACellNotReadStaysNoneAndMarksAreCut) {
  RunRecord r;
  r.samples = wave(5, 1, 2);
  r.samples[3].missing |= column_bit("anon_kb");
  r.samples[4].missing |= column_bit("rss_kb");
  for (size_t i = 0; i < kMaxTraceMarks + 20; ++i) {
    Mark m;
    m.t_ms = double(i) + 0.06;
    m.name = fmt::format("m{}", i);
    r.marks.push_back(m);
  }
  const auto t = trace_of(r);
  ASSERT_EQ(t.points.size(), 5u);
  EXPECT_EQ(t.points[1].rss_kb, 90000);
  EXPECT_DOUBLE_EQ(t.points[1].t_ms, 10.0);  // to 0.1 ms
  EXPECT_FALSE(t.points[3].anon_kb.has_value());
  EXPECT_TRUE(t.points[3].rss_kb.has_value());
  EXPECT_FALSE(t.points[4].rss_kb.has_value());
  ASSERT_EQ(t.marks.size(), kMaxTraceMarks);
  EXPECT_EQ(t.marks.back().name, fmt::format("m{}", kMaxTraceMarks - 1));
  EXPECT_DOUBLE_EQ(t.marks[1].t_ms, 1.1);
}

TEST(HistoryTrace, AStoreGivesBackTheTraceAddedOnce) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "trace-test.sqlite";
  std::filesystem::remove(path);
  std::string error;
  auto store = Store::open(path.string(), error);
  ASSERT_TRUE(store) << error;
  StoredRun run;
  run.hash = "h1";
  run.workload = "w";
  run.status = "ok";
  run.role = "baseline";
  run.repetition = 2;
  run.trace.points = {{0.5, 4000, 700}, {10.1, 9000, std::nullopt}, {20, std::nullopt, 800}};
  run.trace.marks = {{3.2, "</b>start"}};
  ASSERT_EQ(store->add({run}, error).value_or(99), 1u) << error;
  ASSERT_EQ(store->add({run}, error).value_or(99), 0u) << error;
  const auto found = store->traces({1, 42}, error);
  ASSERT_TRUE(found) << error;
  const auto& traced = *found;
  ASSERT_EQ(traced.size(), 1u);
  EXPECT_EQ(traced[0].role, "baseline");
  EXPECT_EQ(traced[0].repetition, 2);
  const auto& t = traced[0].trace;
  ASSERT_EQ(t.points.size(), 3u);
  EXPECT_DOUBLE_EQ(t.points[1].t_ms, 10.1);
  EXPECT_EQ(t.points[1].rss_kb, 9000);
  EXPECT_FALSE(t.points[1].anon_kb.has_value());
  EXPECT_FALSE(t.points[2].rss_kb.has_value());
  ASSERT_EQ(t.marks.size(), 1u);
  EXPECT_EQ(t.marks[0].name, "</b>start");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace mh::history
