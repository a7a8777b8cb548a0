// The change of the live heap by call site between two marks of one run, on
// a hand-made record with known sites: the differential folded stacks, the
// errors of the change, a site one mark did not keep.
#include "core/mark_diff.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mh {
namespace {

HeapFrame fn(uint64_t offset, const std::string& name) {
  HeapFrame f("/opt/prog", offset);
  f.function = name;
  f.source = "symtab";
  return f;
}

// A site leaf <- main, its bytes and stderr given.
HeapSite site(const std::string& leaf, uint64_t offset, double bytes, double stderr_bytes) {
  return HeapSite{bytes, stderr_bytes, 1, {fn(offset, leaf), fn(0x100, "main")}};
}

Mark mark(const std::string& name, double t_ms, std::vector<HeapSite> top, double rest) {
  Mark m;
  m.name = name;
  m.t_ms = t_ms;
  m.heap_sites = HeapSites{};
  m.heap_sites->interval_bytes = 4096;
  m.heap_sites->top = std::move(top);
  m.heap_sites->rest = HeapSite{rest, 0, 1, {}};
  return m;
}

RunRecord known_run() {
  RunRecord r;
  r.allocator.name = "glibc";
  r.repetition = 1;
  r.marks.push_back(mark("start", 100, {site("leak", 0x10, 1000, 30), site("cache", 0x20, 5000, 40),
                                        site("temp", 0x30, 800, 20)}, 70));
  r.marks.push_back(mark("no-sites", 150, {}, 0));
  r.marks.back().heap_sites.reset();
  // leak grew, cache shrank, temp was freed, fresh appeared; a leak site with
  // another caller (same leaf function, other offset) is another site.
  r.marks.push_back(mark("end", 2100, {site("leak", 0x10, 4000, 50), site("cache", 0x20, 3000, 30),
                                      site("fresh", 0x40, 600, 10), site("leak", 0x11, 200, 5)}, 90));
  return r;
}

TEST(MarkDiff, EachSiteAtBothMarksWithTheErrorOfItsChange) {
  std::string error;
  const auto d = mark_diff(known_run(), "start", "end", error);
  ASSERT_TRUE(d) << error;
  ASSERT_EQ(d->sites.size(), 5u);
  // Largest absolute change first: leak +3000, cache -2000, temp -800, fresh +600, leak@0x11 +200.
  EXPECT_EQ(d->sites[0].label, "leak <- main");
  EXPECT_EQ(d->sites[0].change(), 3000);
  EXPECT_DOUBLE_EQ(d->sites[0].stderr_bytes, std::sqrt(50.0 * 50 - 30 * 30));  // 40
  EXPECT_DOUBLE_EQ(d->sites[0].stderr_max, std::sqrt(50.0 * 50 + 30 * 30));
  EXPECT_EQ(d->sites[1].change(), -2000);
  EXPECT_DOUBLE_EQ(d->sites[1].stderr_bytes, std::sqrt(40.0 * 40 - 30 * 30));
  EXPECT_EQ(d->sites[2].change(), -800);
  EXPECT_TRUE(d->sites[2].at_from);
  EXPECT_FALSE(d->sites[2].at_to);
  EXPECT_DOUBLE_EQ(d->sites[2].stderr_bytes, 20);
  EXPECT_EQ(d->sites[3].change(), 600);
  EXPECT_FALSE(d->sites[3].at_from);
  EXPECT_EQ(d->sites[4].change(), 200);
  EXPECT_EQ(d->from_floor, 800);
  EXPECT_EQ(d->to_floor, 200);
  EXPECT_EQ(folded_diff(*d),
            "main;leak 1000 4000\n"
            "main;cache 5000 3000\n"
            "main;temp 800 0\n"
            "main;fresh 0 600\n"
            "main;leak 0 200\n"
            "[other call sites] 70 90\n");
}

TEST(MarkDiff, TheTableNamesTheMarksAndTheChangesInMB) {
  std::string error;
  const auto d = mark_diff(known_run(), "start", "end", error);
  ASSERT_TRUE(d);
  const std::string table = mark_diff_table(*d, 2);
  EXPECT_NE(table.find("from start (0.100 s) to end (2.10 s): +0.00102 MB in all"), std::string::npos) << table;
  EXPECT_NE(table.find("+0.00300"), std::string::npos) << table;
  EXPECT_NE(table.find("-0.00200"), std::string::npos) << table;
  EXPECT_EQ(table.find("temp"), std::string::npos) << table;  // only the top 2
}

TEST(MarkDiff, BackwardsIsTheOppositeChangeWithTheSameErrors) {
  std::string error;
  const auto fwd = mark_diff(known_run(), "start", "end", error);
  const auto back = mark_diff(known_run(), "end", "start", error);
  ASSERT_TRUE(fwd && back);
  ASSERT_EQ(back->sites.size(), fwd->sites.size());
  for (size_t i = 0; i < fwd->sites.size(); ++i) {
    EXPECT_EQ(back->sites[i].change(), -fwd->sites[i].change());
    EXPECT_EQ(back->sites[i].stderr_bytes, fwd->sites[i].stderr_bytes);
  }
}

TEST(MarkDiff, AMarkWithoutSitesIsNamedWithTheMarksThatHaveThem) {
  std::string error;
  EXPECT_FALSE(mark_diff(known_run(), "start", "no-sites", error));
  EXPECT_EQ(error, "--to no-sites: no such mark with call sites in run 1 of glibc; its marks with call sites: start, end");
  EXPECT_FALSE(mark_diff(known_run(), "nope", "end", error));
  EXPECT_NE(error.find("--from nope"), std::string::npos);
}

}  // namespace
}  // namespace mh
