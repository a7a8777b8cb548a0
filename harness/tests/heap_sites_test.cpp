// The live heap's call sites as their readers see them, on hand-made records:
// the peak's sites, the frames outside the allocator, folded stacks, and the
// sites that changed between two sides of a comparison.
#include "core/heap_sites.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "compare/compare.h"
#include "compare/heap_site_diff.h"
#include "report/heap_sites_table.h"

namespace mh {
namespace {

constexpr double kMB = 1e6;

HeapFrame named(const std::string& object, uint64_t offset, const std::string& function, const std::string& file = "",
                int line = 0) {
  HeapFrame f(object, offset);
  f.function = function;
  f.file = file;
  f.line = line;
  f.source = file.empty() ? "symtab" : "dwarf";
  return f;
}

// A site allocated by libstdc++'s operator new through the ledger, from leaf <- mid <- main.
HeapSite cxx_site(double bytes, uint64_t leaf_offset = 0x1100) {
  return HeapSite{bytes, bytes / 100, 10,
                  {named("/usr/lib/libmemharness-ledger.so", 0x500, "malloc"),
                   named("/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", 0x9a000, "operator new(unsigned long)"),
                   named("/opt/prog", leaf_offset, "ns::leaf(std::vector<int, std::allocator<int> >&)", "/src/a.cpp", 12),
                   named("/opt/prog", 0x2200, "mid"), named("/opt/prog", 0x3300, "main"),
                   named("/usr/lib/x86_64-linux-gnu/libc.so.6", 0x27000, "__libc_start_call_main")}};
}

HeapSite plain_site(double bytes, const std::string& function) {
  return HeapSite{bytes, bytes / 100, 10, {named("/opt/prog", 0x4400, function), named("/opt/prog", 0x3300, "main")}};
}

Mark mark_with(const std::string& name, int64_t live_kb, std::vector<HeapSite> top) {
  Mark m;
  m.name = name;
  m.sample.heap_live_kb = live_kb;
  m.heap_sites = HeapSites{};
  m.heap_sites->top = std::move(top);
  return m;
}

TEST(HeapSites, TheLabelStartsAtTheFirstFrameOutsideTheAllocator) {
  EXPECT_EQ(site_label(cxx_site(1), ""), "ns::leaf(…) (a.cpp:12) <- mid <- main");
  EXPECT_EQ(site_label(cxx_site(1), "", 0), "ns::leaf(…) (a.cpp:12)");
  EXPECT_EQ(site_key(cxx_site(1), ""),
            "ns::leaf(std::vector<int, std::allocator<int> >&);mid;main;__libc_start_call_main");
  // The preloaded allocator's frames are skipped too; an unnamed frame is its object and offset.
  HeapSite s{1, 0, 1, {HeapFrame{"/opt/libjemalloc.so.2", 0x10}, HeapFrame{"/opt/libfoo.so", 0x2a}}};
  EXPECT_EQ(site_label(s, "/usr/lib/libjemalloc.so.2"), "libfoo.so+0x2a");
  EXPECT_EQ(frame_label(named("/p", 1, "(anonymous namespace)::load(int)")), "(anonymous namespace)::load(…)");
}

TEST(HeapSites, TheTableTellsSitesApartAndMarksNamesFromAStrippedObject) {
  // Two sites through one allocation function of a stripped library, reached
  // from different places three callers up: two callers read the same, so the
  // lines go on until they differ; a name from .dynsym is marked and explained.
  auto stripped = [](uint64_t caller) {
    HeapFrame alloc("/usr/lib/libdb.so", 0xa7504), exported("/usr/lib/libdb.so", 0xa7600);
    alloc.source = "none";
    exported.function = "db_malloc";
    exported.source = "dynsym";
    return HeapSite{2e6, 1e5, 4,
                    {alloc, exported, HeapFrame{"/usr/lib/libdb.so", 0xb786c}, named("/opt/prog", caller, "caller")}};
  };
  RunRecord r;
  r.workload = "db";
  r.allocator.name = "glibc";
  r.status = Status::Ok;
  r.heap_sites_peak = HeapSites{};
  r.heap_sites_peak->top = {stripped(0x100), stripped(0x200), plain_site(1e6, "load")};
  r.heap_sites_peak->top[1].frames[3].function = "other_caller";
  const std::string table = heap_sites_table({r});
  EXPECT_NE(table.find("libdb.so+0xa7504 <- db_malloc* <- libdb.so+0xb786c <- caller\n"), std::string::npos) << table;
  EXPECT_NE(table.find("<- libdb.so+0xb786c <- other_caller\n"), std::string::npos) << table;
  EXPECT_NE(table.find("load <- main\n"), std::string::npos) << table;
  EXPECT_NE(table.find("* a stripped object's exported name"), std::string::npos) << table;
  // Without such a name, no note.
  r.heap_sites_peak->top = {plain_site(1e6, "load")};
  EXPECT_EQ(heap_sites_table({r}).find("stripped"), std::string::npos);
}

TEST(HeapSites, FoldedStacksAreRootFirstWithIntegerBytes) {
  HeapSites h;
  h.top.push_back(HeapSite{1000.4, 10, 3, {named("/opt/prog", 0x10, "leaf"), HeapFrame{"/opt/libfoo.so", 0x2a}}});
  h.rest = HeapSite{500, 0, 1, {}};
  EXPECT_EQ(folded_stacks(h), "libfoo.so+0x2a;leaf 1000\n[other call sites] 500\n");
}

TEST(HeapSites, ThePeakIsTheKeptSnapshotElseTheMarkHoldingMost) {
  RunRecord r;
  EXPECT_EQ(peak_sites(r), nullptr);
  r.marks = {mark_with("start", 10, {}), mark_with("loaded", 900, {plain_site(1, "f")}), mark_with("end", 20, {})};
  std::string where;
  ASSERT_EQ(peak_sites(r, &where), &*r.marks[1].heap_sites);
  EXPECT_EQ(where, "loaded");
  EXPECT_EQ(sites_at(r, "end"), &*r.marks[2].heap_sites);
  EXPECT_EQ(sites_at(r, "nonesuch"), nullptr);
  r.heap_sites_peak = HeapSites{};
  EXPECT_EQ(peak_sites(r, &where), &*r.heap_sites_peak);
  EXPECT_EQ(where, "peak");
}

RunRecord run_of(const std::string& role, std::vector<HeapSite> top) {
  RunRecord r;
  r.workload = "prog";
  r.role = role;
  r.status = Status::Ok;
  r.marks = {mark_with("loaded", 1000, std::move(top))};
  return r;
}

TEST(HeapSiteDiff, OnlyTheSiteThatChangedBeyondItsErrorsIsShown) {
  std::vector<RunRecord> runs;
  for (int i = 0; i < 3; ++i) {
    // The candidate is another build: leaf's offset moved, its name did not.
    runs.push_back(run_of(kRoleBaseline, {cxx_site(10 * kMB), plain_site(5 * kMB, "steady")}));
    runs.push_back(run_of(kRoleCandidate, {cxx_site(20 * kMB, 0x1180), plain_site(5.01 * kMB, "steady")}));
  }
  const auto changes = heap_site_changes(runs);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].label, "ns::leaf(…) (a.cpp:12) <- mid <- main");
  EXPECT_DOUBLE_EQ(changes[0].candidate_bytes - changes[0].baseline_bytes, 10 * kMB);
  EXPECT_EQ(changes[0].baseline_runs, 3);
  EXPECT_NE(heap_site_changes_table(changes).find("+10.0"), std::string::npos) << heap_site_changes_table(changes);
  EXPECT_EQ(heap_site_changes_json(changes)[0]["change_bytes"], 10000000);
  // A side without call sites: nothing to compare.
  runs.erase(std::remove_if(runs.begin(), runs.end(), [](const auto& r) { return r.role == kRoleCandidate; }),
             runs.end());
  EXPECT_TRUE(heap_site_changes(runs).empty());
}

TEST(HeapSiteDiff, AChangeWithinThreeStandardErrorsIsNotShown) {
  HeapSite noisy = plain_site(5 * kMB, "noisy");
  noisy.stderr_bytes = 1 * kMB;
  HeapSite more = noisy;
  more.bytes = 9 * kMB;  // 4 MiB apart, 3 * sqrt(2) MiB = 4.24 MiB needed
  const auto changes = heap_site_changes({run_of(kRoleBaseline, {noisy}), run_of(kRoleCandidate, {more})});
  EXPECT_TRUE(changes.empty());
}

}  // namespace
}  // namespace mh
