// Run status and allocator verification (judge), and the runner's failure
// paths with a workload that misbehaves on request.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>

#include "measure/runner.h"
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
  r.samples.push_back(Sample{});  // it was sampled
  return r;
}

RunEnd ended(int wait_status, SamplerEnd how = SamplerEnd::Exited) {
  RunEnd e;
  e.wait_status = wait_status;
  e.how = how;
  return e;
}

constexpr int kExit0 = 0;  // wait status of a clean exit

TEST(Judge, VerifiedRunIsOk) {
  auto r = asked("glibc", "glibc");
  judge(r, ended(kExit0));
  EXPECT_TRUE(r.allocator.verified);
  EXPECT_EQ(r.status, Status::Ok);
}

TEST(Judge, WrongAllocatorIsAFailedRun) {
  auto r = asked("jemalloc", "glibc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/lib/x86_64-linux-gnu/libc.so.6");
  judge(r, ended(kExit0));
  EXPECT_FALSE(r.allocator.verified);
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_NE(r.exit.error.find("served by glibc"), std::string::npos) << r.exit.error;
}

TEST(Judge, SameFamilyFromAnotherFileIsNotVerified) {
  auto r = asked("jemalloc", "jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/opt/other/libjemalloc.so.2");
  judge(r, ended(kExit0));
  EXPECT_FALSE(r.allocator.verified);
}

TEST(Judge, SignalIsACrashAndTimeoutWins) {
  auto r = asked("glibc", "glibc");
  judge(r, ended(SIGSEGV));  // WIFSIGNALED for a raw signal number
  EXPECT_EQ(r.status, Status::Crashed);
  auto t = asked("glibc", "glibc");
  judge(t, ended(SIGKILL, SamplerEnd::TimedOut));
  EXPECT_EQ(t.status, Status::Timeout);
}

TEST(Judge, NonZeroExitFails) {
  auto r = asked("glibc", "glibc");
  r.exit.code = 3;
  judge(r, ended(3 << 8));
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_NE(r.exit.error.find("status 3"), std::string::npos);
}

TEST(Judge, AMissingDeclaredMetricFailsTheRun) {
  auto r = asked("glibc", "glibc");
  r.workload_metrics["calls"].value = 3;
  r.workload_metrics["ms_to_baseline"].reason = "never";  // null with a reason counts as reported
  judge(r, ended(kExit0), {"calls", "ms_to_baseline", "bytes"});
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_NE(r.exit.error.find("bytes"), std::string::npos) << r.exit.error;
  EXPECT_EQ(r.exit.error.find("calls"), std::string::npos) << r.exit.error;
}

TEST(Judge, ARunWithoutSamplesIsFailedNotZero) {
  auto r = asked("glibc", "glibc");
  r.samples.clear();
  judge(r, ended(kExit0));
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_NE(r.exit.error.find("no sample"), std::string::npos) << r.exit.error;
}

TEST(Judge, InterruptedAndOomAreTheirOwnStatuses) {
  auto r = asked("glibc", "glibc");
  judge(r, ended(SIGKILL, SamplerEnd::Interrupted));
  EXPECT_EQ(r.status, Status::Interrupted);
  auto o = asked("glibc", "glibc");
  RunEnd e = ended(SIGKILL);
  e.oom = true;
  judge(o, e);
  EXPECT_EQ(o.status, Status::Oom);
  EXPECT_STREQ(status_name(o.status), "oom");
}

TEST(Judge, AMarkOutOfStepFailsTheRun) {
  auto r = asked("glibc", "glibc");
  r.protocol_errors.push_back("message x has sequence number 7, expected 1");
  judge(r, ended(kExit0));
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_NE(r.exit.error.find("mark protocol: message x has sequence number 7"), std::string::npos) << r.exit.error;
}

RunRequest misbehave(const std::string& mode, double timeout_s = 10) {
  std::string error;
  RunRequest req;
  req.workload = "misbehave";
  req.binary = std::string(TEST_WORKLOAD_DIR) + "/misbehave";
  req.args = {"--mode", mode};
  req.allocator = *parse_allocator("glibc", default_allocator_context("/nonexistent"), error);
  req.repetition = 1;
  req.run.timeout_s = timeout_s;
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

  req.run.smaps_ms = 50;
  auto periodic = run_one(req);
  ASSERT_EQ(periodic.status, Status::Timeout);
  EXPECT_EQ(periodic.sampler.smaps_ms, 50);
  const auto marks = static_cast<int64_t>(periodic.marks.size());
  EXPECT_GE(periodic.sampler.smaps_reads, marks + 5);
  EXPECT_LE(periodic.sampler.smaps_reads, marks + 11);
}

TEST(Runner, OnePeriodicSampleHasNoAchievedInterval) {
  auto req = misbehave("crash");
  req.run.sample_ms = 1000;  // the workload dies after 50 ms: one periodic sample
  auto r = run_one(req);
  EXPECT_EQ(r.status, Status::Crashed);
  EXPECT_FALSE(r.sampler.achieved_ms);
}

TEST(Runner, AWorkloadThatIgnoresSigtermIsKilledAfterTheGrace) {
  auto r = run_one(misbehave("stubborn", 0.5));
  EXPECT_EQ(r.status, Status::Timeout);
  ASSERT_TRUE(r.exit.signal);
  EXPECT_EQ(*r.exit.signal, SIGKILL);
  EXPECT_GE(r.wall_ms, 2400);  // the timeout, then the 2 s grace SIGTERM got
  EXPECT_LT(r.wall_ms, 6000);
}

TEST(Runner, PastTheMemoryLimitIsOomWhereACgroupCanBeMade) {
  auto req = misbehave("hog", 30);
  req.run.memory_limit = 96u << 20;
  auto r = run_one(req);
  ASSERT_TRUE(r.memory_limit.is_object());
  EXPECT_EQ(r.memory_limit["bytes"], 96u << 20);
  const std::string mechanism = r.memory_limit["mechanism"];
  if (mechanism.rfind("cgroup", 0) == 0) {
    EXPECT_EQ(r.status, Status::Oom) << r.exit.error << r.output_tail;
    EXPECT_LE(r.peak_rss_kb, 100 * 1024);
  } else {
    // RLIMIT_AS: malloc fails and the workload exits 4; said, never a result.
    EXPECT_EQ(mechanism, "RLIMIT_AS");
    EXPECT_EQ(r.status, Status::Failed) << r.exit.error;
    EXPECT_FALSE(r.memory_limit.value("note", "").empty());
  }
}

TEST(Runner, AMarkWithTheWrongSequenceNumberFailsTheRun) {
  auto r = run_one(misbehave("skip-seq"));
  EXPECT_EQ(r.status, Status::Failed);
  EXPECT_NE(r.exit.error.find("sequence number 7, expected 1"), std::string::npos) << r.exit.error;
}

TEST(Runner, TheWorkloadGetsItsOwnTemporaryDirectoryRemovedAfterwards) {
  const std::string parent = test::scratch("tmp-parent");
  std::filesystem::create_directories(parent);
  auto req = misbehave("hang", 0.3);
  req.tmp_parent = parent;
  auto r = run_one(req);
  EXPECT_EQ(r.status, Status::Timeout);
  EXPECT_TRUE(std::filesystem::is_empty(parent));
}

TEST(RunCapture, AHelperPastItsLimitIsKilled) {
  const auto t0 = std::chrono::steady_clock::now();
  auto c = run_capture({"/bin/sleep", "30"}, 0.3);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(c.timed_out);
  EXPECT_EQ(c.exit_code, -1);
  EXPECT_LT(s, 5);
}

}  // namespace
}  // namespace mh
