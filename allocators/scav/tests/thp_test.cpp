// thp_test.cpp - the scavenger's collapses: 2 MiB of arena in use and resident a purge
// delay after it filled becomes one huge page, keeps its contents and is split again
// by the purge that gives it back; a region in use but mostly not resident stays in
// small pages. Runs with SCAV_THP_COLLAPSE_MS=50 and SCAV_SAFETY_TIMEOUT_MS=100
// (CMakeLists.txt): looks wait for a pass, which a program that only allocates gets
// from the scavenger's scan after that long asleep.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scav.h"
#include "test_util.h"

namespace {

using scav_test::stat;
using scav_test::wait_for;

// The options CMakeLists.txt sets for these tests, as the process got them.
void require_test_options() {
  ASSERT_STREQ(getenv("SCAV_THP_COLLAPSE_MS"), "50");
  ASSERT_STREQ(getenv("SCAV_SAFETY_TIMEOUT_MS"), "100");
}

// Where the kernel can make huge pages at all; empty when it can, else why not.
std::string thp_unavailable() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  if (!std::getline(f, mode)) return "the kernel has no transparent huge pages";
  if (mode.find("[never]") != std::string::npos) return "transparent huge pages are off ([never])";
  return "";
}

// AnonHugePages (KiB) of the mapping that holds p, from /proc/self/smaps.
long huge_kb_around(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::ifstream f("/proc/self/smaps");
  std::string line;
  bool in = false;
  while (std::getline(f, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      in = lo <= a && a < hi;
      continue;
    }
    if (in && line.rfind("AnonHugePages:", 0) == 0) return std::strtol(line.c_str() + 14, nullptr, 10);
  }
  return -1;
}

TEST(Thp, ARegionInUseAndResidentBecomesOneHugePageAndSplitsWhenPurged) {
  ASSERT_NO_FATAL_FAILURE(require_test_options());
  if (const std::string why = thp_unavailable(); !why.empty()) GTEST_SKIP() << why;
  const int64_t collapses = stat("thp_collapses"), failures = stat("thp_collapse_failures");
  // 8 MiB of 4000-byte blocks (64 KiB pages), every byte written: whole regions of the
  // arena in use and resident.
  constexpr size_t kBlock = 4000, kCount = 8 * scav_test::kMiB / kBlock;
  std::vector<unsigned char*> blocks;
  for (size_t i = 0; i < kCount; i++) {
    auto* b = static_cast<unsigned char*>(std::malloc(kBlock));
    ASSERT_NE(b, nullptr);
    std::memset(b, int(i & 0xff), kBlock);
    blocks.push_back(b);
  }
  const bool made = wait_for([&] { return stat("thp_collapses") >= collapses + 2; }, 5000);
  // The kernel may have no free huge page to give (EAGAIN, ENOMEM: memory too
  // fragmented); that is the machine, not the allocator.
  if (!made && stat("thp_collapses") == collapses && stat("thp_collapse_failures") > failures)
    GTEST_SKIP() << "the kernel refused every collapse: no huge page to be had";
  ASSERT_TRUE(made)
      << "collapses: " << stat("thp_collapses") - collapses << ", skips " << stat("thp_collapse_skips")
      << ", failures " << stat("thp_collapse_failures");
  EXPECT_GE(huge_kb_around(blocks[kCount / 2]), 4096) << "the kernel shows no huge page in the arena";
  EXPECT_GE(stat("thp_collapsed_bytes"), 4 * scav_test::kMiB);
  // A collapse copies what was there.
  for (size_t i = 0; i < kCount; i++)
    for (size_t k = 0; k < kBlock; k += 997) ASSERT_EQ(blocks[i][k], i & 0xff) << "block " << i << " byte " << k;

  for (auto* b : blocks) std::free(b);
  scav_collect(true);
  EXPECT_EQ(stat("thp_collapsed_bytes"), 0) << "a purge left a region counted as one huge page";
  EXPECT_EQ(huge_kb_around(blocks[kCount / 2]), 0) << "purged regions still huge";
}

TEST(Thp, ARegionInUseButNotResidentStaysInSmallPages) {
  ASSERT_NO_FATAL_FAILURE(require_test_options());
  if (const std::string why = thp_unavailable(); !why.empty()) GTEST_SKIP() << why;
  scav_collect(true);
  const int64_t collapses = stat("thp_collapses"), skips = stat("thp_collapse_skips");
  // 16 MiB of 60 KiB blocks in 1 MiB pages, only the first bytes of each written (by
  // the free list and here): the regions are in use, one OS page in 15 resident.
  constexpr size_t kBlock = 60 * 1024, kCount = 16 * scav_test::kMiB / kBlock;
  std::vector<char*> blocks;
  for (size_t i = 0; i < kCount; i++) {
    blocks.push_back(static_cast<char*>(std::malloc(kBlock)));
    ASSERT_NE(blocks.back(), nullptr);
    blocks.back()[0] = 1;
  }
  // Each region is looked at 50 ms (SCAV_THP_COLLAPSE_MS) after it filled, then again
  // 13 ms apart.
  ASSERT_TRUE(wait_for([&] { return stat("thp_collapse_skips") >= skips + 4; }, 5000))
      << "skips: " << stat("thp_collapse_skips") - skips;
  EXPECT_EQ(stat("thp_collapses"), collapses) << "a region mostly absent was collapsed";
  EXPECT_EQ(huge_kb_around(blocks[kCount / 2]), 0);
  for (auto* b : blocks) std::free(b);
}

}  // namespace
