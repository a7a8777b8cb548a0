// Growth over a run (core/run_growth.h) on hand-made records: which series are
// tested, the window, too-short runs, the verdict texts and the notes under the
// run table. No process.
#include "core/run_growth.h"

#include <gtest/gtest.h>

#include <random>

#include "core/curve.h"
#include "core/escape.h"
#include "report/summary_table.h"

namespace mh {
namespace {

constexpr double kKbPerMb = 1e6 / 1024;

// A run sampled every 100 ms for `seconds`: the live heap rising at `live`
// MB/min from 50 MB and the memory outside it at `outside` MB/min from 20 MB,
// each with a little noise; without the ledger its cells are unreadable.
RunRecord run(double seconds, double live, double outside, bool ledger = true, uint64_t seed = 1) {
  RunRecord r;
  r.workload = "w";
  r.allocator.name = "glibc";
  r.status = Status::Ok;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, 0.05 * kKbPerMb);
  for (double t = 0; t <= seconds * 1000; t += 100) {
    Sample s;
    s.t_ms = t;
    const double min = t / 60000;
    s.heap_live_kb = int64_t((50 + live * min) * kKbPerMb + noise(rng));
    s.anon_kb = s.heap_live_kb + int64_t((20 + outside * min) * kKbPerMb + noise(rng));
    s.rss_kb = s.anon_kb + 1000;
    r.samples.push_back(s);
  }
  if (!ledger) r.sampler.unreadable["heap_live_kb"] = "the heap ledger is off (--ledger)";
  compute_curve(r, "", "");
  return r;
}

const Maybe* metric(const RunRecord& r, const std::string& name) {
  for (const auto& [n, m] : r.curve)
    if (n == name) return &m;
  return nullptr;
}

TEST(RunGrowth, TheLedgersTwoSlopesTellALeakFromTheAllocator) {
  const RunRecord r = run(60, 3, 0);
  const Maybe *live = metric(r, "growth.live_mb_per_min"), *outside = metric(r, "growth.outside_mb_per_min");
  ASSERT_TRUE(live && live->value) << (live ? live->reason : "none");
  ASSERT_TRUE(outside && outside->value);
  EXPECT_NEAR(*live->value, 3, 0.1);
  EXPECT_NEAR(*outside->value, 0, 0.1);
  EXPECT_EQ(metric(r, "growth.anon_mb_per_min"), nullptr);  // only without the ledger
  EXPECT_EQ(r.growth["series"][0]["direction"], "growing");
  EXPECT_EQ(r.growth["series"][1]["direction"], "flat");
  const std::string v = r.growth["verdict"];
  EXPECT_EQ(v.rfind("live heap growing at 3", 0), 0u) << v;
  EXPECT_NE(v.find("(a leak?)"), std::string::npos) << v;
  EXPECT_EQ(v.find("allocator"), std::string::npos) << v;

  const RunRecord a = run(60, 0, 2);
  EXPECT_EQ(std::string(a.growth["verdict"]).rfind("the allocator's share growing at 2", 0), 0u) << a.growth["verdict"];
  EXPECT_NEAR(*metric(a, "growth.live_mb_per_min")->value, 0, 0.1);
}

TEST(RunGrowth, WithoutTheLedgerAnonymousRssIsTestedAsAWhole) {
  const RunRecord r = run(60, 1, 1, false);
  EXPECT_EQ(metric(r, "growth.live_mb_per_min"), nullptr);
  ASSERT_NE(metric(r, "growth.anon_mb_per_min"), nullptr);
  EXPECT_NEAR(*metric(r, "growth.anon_mb_per_min")->value, 2, 0.1);
  EXPECT_NE(std::string(r.growth["verdict"]).find("anonymous RSS growing at 2"), std::string::npos);
}

TEST(RunGrowth, AFlatRunSaysTheSmallestGrowthItCouldSee) {
  const RunRecord r = run(60, 0, 0);
  const std::string v = r.growth["verdict"];
  EXPECT_EQ(v.rfind("no growth beyond ", 0), 0u) << v;
  EXPECT_NE(v.find(" MB/min (the smallest this run could see)"), std::string::npos) << v;
  const double bound = std::max(r.growth["series"][0]["hi"].get<double>(), r.growth["series"][1]["hi"].get<double>());
  EXPECT_GT(bound, 0);
  EXPECT_LT(bound, 0.2);  // 48 s of 100 ms samples with 0.05 MB of noise
}

TEST(RunGrowth, ATooShortRunHasNullSlopesWithTheReason) {
  const RunRecord r = run(2, 50, 0);  // 21 samples, 16 after the warm-up
  const Maybe* live = metric(r, "growth.live_mb_per_min");
  ASSERT_NE(live, nullptr);
  EXPECT_FALSE(live->value);
  EXPECT_NE(live->reason.find("a slope needs at least 30 over 2 s"), std::string::npos) << live->reason;
  EXPECT_EQ(r.growth["verdict"], "");
}

// The window: after the first 20% of the run, or between the growth marks.
TEST(RunGrowth, TheWindowSkipsTheWarmUpOrFollowsTheMarks) {
  RunRecord r = run(60, 0, 0);
  // A start-up that fills 100 MB in the first 10 s: outside the warm-up window.
  for (auto& s : r.samples)
    if (s.t_ms < 10000) s.heap_live_kb -= int64_t((10000 - s.t_ms) / 100 * kKbPerMb);
  compute_curve(r, "", "");
  EXPECT_EQ(r.growth["window"]["from_ms"], 12000);
  EXPECT_EQ(r.growth["series"][0]["direction"], "flat") << r.growth.dump();
  // Marks at 1 s and 12 s: the start-up's last 9 s are inside, so it grows.
  r.marks.push_back(Mark{1000, kGrowthStartMark, r.samples[10], {}, false, {}, {}});
  r.marks.push_back(Mark{12000, kGrowthEndMark, r.samples[120], {}, false, {}, {}});
  compute_curve(r, "", "");
  EXPECT_EQ(r.growth["window"]["from_ms"], 1000);
  EXPECT_EQ(r.growth["window"]["to_ms"], 12000);
  EXPECT_EQ(r.growth["window"]["marked"], true);
  EXPECT_EQ(r.growth["series"][0]["direction"], "growing") << r.growth.dump();
  EXPECT_EQ(r.growth["series"][0]["samples"], 111);
}

// Memory outside the live heap that grows in thread stacks or named mappings is
// the program's, not the allocator's: the marks' not-malloc figures say so.
TEST(RunGrowth, GrowthInStacksAndNamedMappingsIsOutsideMalloc) {
  RunRecord r = run(60, 0, 6);  // outside the live heap: +6 MB/min
  auto mark_at = [&](size_t i, const char* name, int64_t stacks_kb, int64_t named_kb) {
    Mark m{r.samples[i].t_ms, name, r.samples[i], {}, false, {}, {}};
    m.not_malloc = NotMalloc{stacks_kb, named_kb};
    return m;
  };
  // 12 s to 60 s: 4.8 MB of growth outside; stacks +3.9 MB and named +0.98 MB of it.
  r.marks = {mark_at(120, kGrowthStartMark, 1000, 0), mark_at(600, kGrowthEndMark, 1000 + 3800, 960)};
  compute_curve(r, "", "");
  const std::string v = r.growth["verdict"];
  EXPECT_EQ(v.rfind("growing outside malloc at 6", 0), 0u) << v;
  EXPECT_NE(v.find("thread stacks +3.89 MB, named mappings +0.983 MB between 'growth-start' and 'growth-end'"),
            std::string::npos) << v;
  EXPECT_EQ(v.find("allocator"), std::string::npos) << v;
  EXPECT_EQ(r.growth["outside_malloc"]["minutes"], 0.8);

  // A small part of it not malloc's: still the allocator's share, with that part said.
  r.marks = {mark_at(120, kGrowthStartMark, 1000, 0), mark_at(600, kGrowthEndMark, 1500, 0)};
  compute_curve(r, "", "");
  const std::string a = r.growth["verdict"];
  EXPECT_EQ(a.rfind("the allocator's share growing at 6", 0), 0u) << a;
  EXPECT_NE(a.find("; of it not malloc's: thread stacks +0.512 MB, named mappings +0 MB"), std::string::npos) << a;

  // Without the figures (no ledger at the marks): the allocator's share, as before.
  r.marks = {mark_at(120, kGrowthStartMark, 0, 0), mark_at(600, kGrowthEndMark, 0, 0)};
  r.marks[0].not_malloc.reset();
  compute_curve(r, "", "");
  EXPECT_FALSE(r.growth.contains("outside_malloc"));
  const std::string plain = r.growth["verdict"];
  EXPECT_EQ(plain.rfind("the allocator's share growing at 6", 0), 0u) << plain;
  EXPECT_EQ(plain.find("not malloc"), std::string::npos) << plain;
}

TEST(GrowthVerdict, TextsOfEachCase) {
  auto series = [](const char* name, double slope, double lo, double hi, const char* dir) {
    return Json{{"name", name}, {"mb_per_min", slope}, {"lo", lo}, {"hi", hi}, {"direction", dir}};
  };
  Json g{{"series", Json::array({series("live", 1.048, 1.01, 1.09, "growing"), series("outside", 0.5, 0.2, 0.8, "growing")})}};
  EXPECT_EQ(growth_verdict(g),
            "live heap growing at 1.05 MB/min [1.01-1.09] (a leak?); the allocator's share growing at 0.500 MB/min "
            "[0.200-0.800] (fragmentation or retention)");
  g = Json{{"series", Json::array({series("live", 0.01, -0.02, 0.04, "flat"), series("outside", -1, -2, -0.5, "falling")})}};
  EXPECT_EQ(growth_verdict(g), "no growth beyond 0.0400 MB/min (the smallest this run could see)");
  g = Json{{"series", Json::array({series("anon", 12, 11, 13, "growing")})}};
  EXPECT_EQ(growth_verdict(g),
            "anonymous RSS growing at 12.0 MB/min [11.0-13.0] (a leak or the allocator's: --ledger tells them apart)");
  EXPECT_EQ(growth_verdict(Json{{"series", Json::array({Json{{"name", "live"}, {"reason", "too short"}}})}}), "");
  // A block read back from a report with the wrong types says nothing rather than throwing.
  EXPECT_EQ(growth_verdict(Json{{"series", Json::array({Json{{"name", 3}, {"mb_per_min", "x"}}, 5})}}),
            "no growth beyond 0 MB/min (the smallest this run could see)");
  EXPECT_EQ(growth_verdict(Json{{"series", 5}}), "");
}

TEST(GrowthNotes, UnderTheRunTableOnePerAllocatorAndKind) {
  std::vector<RunRecord> runs = {run(60, 3, 0, true, 1), run(60, 3, 0, true, 2), run(60, 0, 0, true, 3)};
  runs[2].allocator.name = "scav";
  RunRecord quiet = run(60, 0, 0, false, 4);  // flat without the ledger: no note
  quiet.allocator.name = "jemalloc";
  runs.push_back(quiet);
  const std::string t = summary_table(runs);
  EXPECT_NE(t.find("growth of w under glibc (2 of 2 runs; the median one): live heap growing at 3"), std::string::npos) << t;
  EXPECT_NE(t.find("growth of w under scav: no growth beyond "), std::string::npos) << t;
  EXPECT_EQ(t.find("under jemalloc"), std::string::npos) << t;
}

// Sites at two marks: `leak` grows by 6 MB, `cache` by 1 MB, `steady` not at
// all, `gone` is freed; the verdict names the one that grew most.
HeapSite site(const char* function, double mb) {
  HeapSite s;
  s.bytes = mb * 1e6;
  s.stderr_bytes = 0.1e6;
  s.frames.push_back(HeapFrame("/bin/w", 0x10));
  s.frames.back().function = function;
  return s;
}

TEST(RunGrowth, TheVerdictNamesTheSiteThatGrewMost) {
  RunRecord r = run(60, 6, 0);
  Mark start, end;
  start.name = kGrowthStartMark, start.t_ms = 12000;
  end.name = kGrowthEndMark, end.t_ms = 60000;
  start.heap_sites = HeapSites{};
  start.heap_sites->top = {site("steady", 40), site("cache", 2), site("leak", 1), site("gone", 5)};
  end.heap_sites = HeapSites{};
  end.heap_sites->top = {site("steady", 40), site("leak", 7), site("cache", 3)};
  r.marks = {start, end};
  compute_growth(r);
  const Json& sites = r.growth["grown_sites"]["sites"];
  ASSERT_EQ(sites.size(), 2u) << r.growth.dump();
  EXPECT_EQ(sites[0]["site"], "leak");
  EXPECT_DOUBLE_EQ(sites[0]["mb"].get<double>(), 6);
  EXPECT_NEAR(sites[0]["stderr_mb"].get<double>(), 0.14142, 1e-5);
  EXPECT_EQ(sites[1]["site"], "cache");
  const std::string v = r.growth["verdict"];
  EXPECT_NE(v.find("; most grown: leak (+6.00 MB between 'growth-start' and 'growth-end')"), std::string::npos) << v;

  // Flat live heap: the sites are kept in the block, the verdict names none.
  RunRecord flat = run(60, 0, 0);
  flat.marks = {start, end};
  compute_growth(flat);
  EXPECT_TRUE(flat.growth.contains("grown_sites"));
  EXPECT_EQ(std::string(flat.growth["verdict"]).find("most grown"), std::string::npos);
}

}  // namespace
}  // namespace mh
