// Run status and allocator verification (judge), and the runner's failure
// paths with a workload that misbehaves on request.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "runner.h"
#include "test_util.h"

namespace mh {
namespace {

RunRecord asked(const std::string& family, const std::string& identified, const std::string& library = "",
                const std::string& served_by = "") {
  RunRecord r;
  r.allocator.name = family;
  r.allocator.family = family;
  r.allocator.identified = identified;
  r.allocator.library = library;
  r.allocator.served_by = served_by;
  r.exit.code = 0;
  return r;
}

constexpr int kExit0 = 0;  // wait status of a clean exit

TEST(Judge, VerifiedRunIsOk) {
  auto r = asked("glibc", "glibc");
  judge(r, false, kExit0, "");
  EXPECT_TRUE(r.allocator.verified);
  EXPECT_EQ(r.status, Status::Ok);
}

TEST(Judge, WrongAllocatorIsAFailedRun) {
  auto r = asked("jemalloc", "glibc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/lib/x86_64-linux-gnu/libc.so.6");
  judge(r, false, kExit0, "");
  EXPECT_FALSE(r.allocator.verified);
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_NE(r.exit.error.find("served by glibc"), std::string::npos) << r.exit.error;
}

TEST(Judge, SameFamilyFromAnotherFileIsNotVerified) {
  auto r = asked("jemalloc", "jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/opt/other/libjemalloc.so.2");
  judge(r, false, kExit0, "");
  EXPECT_FALSE(r.allocator.verified);
}

TEST(Judge, SignalIsACrashAndTimeoutWins) {
  auto r = asked("glibc", "glibc");
  judge(r, false, SIGSEGV, "");  // WIFSIGNALED for a raw signal number
  EXPECT_EQ(r.status, Status::Crashed);
  auto t = asked("glibc", "glibc");
  judge(t, true, SIGKILL, "");
  EXPECT_EQ(t.status, Status::Timeout);
}

TEST(Judge, NonZeroExitFails) {
  auto r = asked("glibc", "glibc");
  r.exit.code = 3;
  judge(r, false, 3 << 8, "");
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_NE(r.exit.error.find("status 3"), std::string::npos);
}

TEST(Judge, AMissingDeclaredMetricFailsTheRun) {
  auto r = asked("glibc", "glibc");
  r.workload_metrics["calls"].value = 3;
  r.workload_metrics["ms_to_baseline"].reason = "never";  // null with a reason counts as reported
  judge(r, false, kExit0, "", {"calls", "ms_to_baseline", "bytes"});
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_NE(r.exit.error.find("bytes"), std::string::npos) << r.exit.error;
  EXPECT_EQ(r.exit.error.find("calls"), std::string::npos) << r.exit.error;
}

RunRequest misbehave(const std::string& mode, double timeout_s = 10) {
  std::string error;
  RunRequest req;
  req.workload = "misbehave";
  req.binary = std::string(TEST_WORKLOAD_DIR) + "/misbehave";
  req.args = {"--mode", mode};
  req.allocator = *parse_allocator("glibc", default_allocator_context("/nonexistent"), error);
  req.repetition = 1;
  req.timeout_s = timeout_s;
  return req;
}

TEST(Runner, CrashIsRecordedWithItsSignal) {
  auto r = run_one(misbehave("crash"));
  EXPECT_EQ(r.status, Status::Crashed);
  ASSERT_TRUE(r.exit.signal);
  EXPECT_EQ(*r.exit.signal, SIGSEGV);
  EXPECT_FALSE(r.samples.empty());  // it was watched until it died
}

TEST(Runner, HangIsKilledAtTheTimeout) {
  auto r = run_one(misbehave("hang", 0.5));
  EXPECT_EQ(r.status, Status::Timeout);
  EXPECT_GE(r.wall_ms, 450);
  EXPECT_LT(r.wall_ms, 5000);
}

TEST(Runner, MarksAreSampledWhereTheyHappen) {
  auto r = run_one(misbehave("grow"));
  ASSERT_EQ(r.status, Status::Ok) << r.exit.error << r.output_tail;
  ASSERT_GE(r.marks.size(), 3u);
  EXPECT_EQ(r.marks[0].name, "before");
  EXPECT_EQ(r.marks[1].name, "after");
  // The workload touched 64 MiB between the marks and holds it at "after".
  EXPECT_GT(r.marks[1].sample.anon_kb - r.marks[0].sample.anon_kb, 60 * 1024);
  EXPECT_LT(r.marks[0].t_ms, r.marks[1].t_ms);
}

TEST(Runner, SmapsRollupIsReadAtMarksUnlessAPeriodAsksForMore) {
  auto req = misbehave("hang", 0.5);
  auto at_marks = run_one(req);
  ASSERT_EQ(at_marks.status, Status::Timeout);
  EXPECT_EQ(at_marks.sampler.smaps_ms, 0);
  EXPECT_LE(at_marks.sampler.smaps_reads, static_cast<int64_t>(at_marks.marks.size()));
  // 50 periodic samples in 0.5 s; the interval is met.
  ASSERT_TRUE(at_marks.sampler.achieved_ms);
  EXPECT_NEAR(*at_marks.sampler.achieved_ms, 10, 3);

  req.smaps_ms = 50;
  auto periodic = run_one(req);
  ASSERT_EQ(periodic.status, Status::Timeout);
  EXPECT_EQ(periodic.sampler.smaps_ms, 50);
  const auto marks = static_cast<int64_t>(periodic.marks.size());
  EXPECT_GE(periodic.sampler.smaps_reads, marks + 5);
  EXPECT_LE(periodic.sampler.smaps_reads, marks + 11);
}

TEST(Runner, OnePeriodicSampleHasNoAchievedInterval) {
  auto req = misbehave("crash");
  req.sample_ms = 1000;  // the workload dies after 50 ms: one periodic sample
  auto r = run_one(req);
  EXPECT_EQ(r.status, Status::Crashed);
  EXPECT_FALSE(r.sampler.achieved_ms);
}

}  // namespace
}  // namespace mh
