// The run's memory cgroup: the pressure and event files read as the kernel
// writes them, and runs of a program that holds a heap and re-reads a file,
// limited and not: its stall (PSI), its cgroup peak beside its peak RSS, the
// v1 path, and --memory-high where cgroup v2's memory controller is (refused
// where it is not).
#include <gtest/gtest.h>
#include <sys/vfs.h>

#include <filesystem>
#include <linux/magic.h>

#include "measure/memory_group.h"
#include "sys/cgroup.h"
#include "test_util.h"

namespace mh {
namespace {

TEST(Pressure, TotalsAreReadFromTheSomeAndFullLines) {
  const auto p = cgroup::parse_pressure(
      "some avg10=0.00 avg60=0.12 avg300=0.03 total=164011\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=42\n");
  ASSERT_TRUE(p.some_us && p.full_us);
  EXPECT_EQ(*p.some_us, 164011u);
  EXPECT_EQ(*p.full_us, 42u);
  const auto some_only = cgroup::parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n");
  EXPECT_EQ(some_only.some_us.value_or(0), 7u);
  EXPECT_FALSE(some_only.full_us);
  EXPECT_FALSE(cgroup::parse_pressure("").some_us);
}

TEST(Pressure, AKeyedValueIsFoundByItsWholeKey) {
  const std::string events = "low 0\nhigh 12\nmax 3\noom 1\noom_kill 2\noom_group_kill 0\n";
  EXPECT_EQ(cgroup::keyed_value(events, "high").value_or(-1), 12);
  EXPECT_EQ(cgroup::keyed_value(events, "oom").value_or(-1), 1);
  EXPECT_EQ(cgroup::keyed_value(events, "oom_kill").value_or(-1), 2);
  EXPECT_FALSE(cgroup::keyed_value(events, "oom_k"));
  EXPECT_EQ(cgroup::keyed_value("oom_kill_disable 0\nunder_oom 0\noom_kill 5\n", "oom_kill").value_or(-1), 5);
}

// Where the file goes: a folder on a disk, not tmpfs (a file on tmpfs is
// shared memory, which a limit cannot reclaim without swap). "" when none.
std::string disk_folder() {
  for (const char* dir : {"/var/tmp", "/tmp"}) {
    struct statfs st {};
    if (statfs(dir, &st) == 0 && st.f_type != TMPFS_MAGIC) return dir;
  }
  return "";
}

bool pressure_here() {
  const std::string own = cgroup::own_dir("");
  return !own.empty() && std::filesystem::exists(own + "/memory.pressure");
}

bool memory_group_here() { return cgroup::v2_memory_why_not().empty() || !cgroup::own_dir("memory").empty(); }

// One run of file_reread (64 MB of heap, a 256 MB file read back 3 times)
// under `limit` ("" none): the report's run.
Json file_run(const std::string& name, std::vector<std::string> limit) {
  const std::string out = test::scratch(name + ".json");
  std::vector<std::string> args = {"-a", "glibc", "--runs", "1", "--quiet", "--out", out};
  args.insert(args.end(), limit.begin(), limit.end());
  const std::string dir = disk_folder();
  for (std::string a : {"--", FILE_REREAD, dir.c_str(), "64", "256", "3"}) args.push_back(a);
  const auto r = test::run_harness(args, 120);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return test::load_json(out)["runs"][0];
}

#define REQUIRE_GROUPS()                                                                              \
  if (disk_folder().empty()) GTEST_SKIP() << "no folder on a disk (/var/tmp and /tmp are tmpfs)";    \
  if (!memory_group_here()) GTEST_SKIP() << "no memory cgroup can be made here (not root, no delegation)"; \
  if (!pressure_here()) GTEST_SKIP() << "no memory.pressure in this process's v2 group (no PSI)"

TEST(MemoryGroup, AFileRunLimitedBelowItsHeapPlusItsCacheStallsOnMemory) {
  REQUIRE_GROUPS();
  const Json run = file_run("limited", {"--memory-limit", "160M"});
  ASSERT_EQ(run["status"], "ok") << run["exit"];
  const Json& m = run["metrics"];
  ASSERT_TRUE(m["psi_some_ms"].is_number()) << m.value("psi_some_ms_reason", "");
  EXPECT_GT(m["psi_some_ms"].get<double>(), 0);
  ASSERT_TRUE(m["cgroup_peak_kb"].is_number());
  EXPECT_LE(m["cgroup_peak_kb"].get<double>(), 160 * 1024);
  // The stall is on the time axis too: the cumulative column ends where the total is.
  const Json& psi = run["samples"]["psi_some_ms"];
  ASSERT_TRUE(psi.is_array() && !psi.empty());
  EXPECT_GT(psi.back().get<double>(), 0);
  EXPECT_LE(psi.back().get<double>(), m["psi_some_ms"].get<double>());
}

TEST(MemoryGroup, TheSameRunUnlimitedHardlyStalls) {
  REQUIRE_GROUPS();
  const Json run = file_run("unlimited", {});
  ASSERT_EQ(run["status"], "ok") << run["exit"];
  const Json& m = run["metrics"];
  ASSERT_TRUE(m["psi_some_ms"].is_number()) << m.value("psi_some_ms_reason", "");
  const double seconds = run["wall_ms"].get<double>() / 1000;
  EXPECT_LT(m["psi_some_ms"].get<double>() / seconds, 1.0) << m["psi_some_ms"] << " ms in " << seconds << " s";
}

TEST(MemoryGroup, AFileRunsCgroupPeakHoldsItsCacheAbovePeakRss) {
  REQUIRE_GROUPS();
  const Json run = file_run("peak", {});
  const Json& m = run["metrics"];
  ASSERT_TRUE(m["cgroup_peak_kb"].is_number()) << m.value("cgroup_peak_kb_reason", "");
  EXPECT_GE(m["cgroup_peak_kb"].get<double>(), m["peak_rss_kb"].get<double>());
  // The file's cache is in it: well above the 64 MB heap.
  EXPECT_GT(m["cgroup_peak_kb"].get<double>(), m["peak_rss_kb"].get<double>() + 128 * 1024);
}

TEST(MemoryGroup, WhereTheMemoryControllerIsOnV1TheRunHasAV1Group) {
  if (cgroup::v2_memory_why_not().empty()) GTEST_SKIP() << "the memory controller is cgroup v2's here";
  if (cgroup::own_dir("memory").empty()) GTEST_SKIP() << "no v1 memory hierarchy is mounted";
  if (disk_folder().empty()) GTEST_SKIP() << "no folder on a disk";
  const Json run = file_run("v1", {});
  EXPECT_EQ(run["memory_group"]["memory"], "cgroup v1") << run["memory_group"];
  const Json& m = run["metrics"];
  EXPECT_TRUE(m["cgroup_peak_kb"].is_number());
  EXPECT_TRUE(m["memory_max_events"].is_number());
  EXPECT_TRUE(m["memory_high_events"].is_null());
  EXPECT_NE(m.value("memory_high_events_reason", "").find("v1"), std::string::npos);
}

TEST(MemoryGroup, MemoryHighThrottlesWithoutKillingOnCgroupV2) {
  if (const std::string why = memory_high_why_not(); !why.empty()) GTEST_SKIP() << why;
  if (disk_folder().empty()) GTEST_SKIP() << "no folder on a disk";
  const Json run = file_run("high", {"--memory-high", "128M"});
  ASSERT_EQ(run["status"], "ok") << run["exit"];
  const Json& m = run["metrics"];
  EXPECT_GT(m["memory_high_events"].get<double>(), 0);
  EXPECT_EQ(m["memory_oom_kills"].get<double>(), 0);
  EXPECT_GT(m["psi_some_ms"].get<double>(), 0);
}

TEST(MemoryGroup, MemoryHighIsRefusedWithTheReasonWhereV2HasNoMemoryController) {
  const std::string why = memory_high_why_not();
  if (why.empty()) GTEST_SKIP() << "cgroup v2's memory controller is delegated here";
  const auto r = test::run_harness({"-w", "burst-writefile", "--smoke", "--memory-high", "100M"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--memory-high 100M needs cgroup v2's memory controller"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
}

}  // namespace
}  // namespace mh
