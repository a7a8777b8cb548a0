// Containment and run_capture: whatever a child does with its pipes and its
// children, the deadline holds and nothing it started outlives it. Each test's
// processes carry a marker of their own (sleep 77.2NN), so that what is left
// can be found and is killed after the test.
#include <gtest/gtest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "sys/containment.h"
#include "sys/procfs.h"
#include "sys/spawn.h"

namespace mh {
namespace {

// Whether the process of /proc/PID (dir) exists and is not a zombie.
bool running(const std::string& dir) {
  auto stat = procfs::read_text(dir + "/stat");
  auto st = stat ? procfs::parse_stat(*stat) : std::nullopt;
  return st && st->state != 'Z';
}

// Running processes whose command line is `sleep MARKER`.
std::vector<pid_t> alive_with(const std::string& marker) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    const std::string dir = std::string("/proc/") + e->d_name;
    auto cmdline = procfs::read_text(dir + "/cmdline");
    if (cmdline && *cmdline == std::string("sleep\0", 6) + marker + '\0' && running(dir))
      out.push_back(std::stoi(e->d_name));
  }
  if (d) closedir(d);
  return out;
}

// Fails the test for each process left with the marker, and kills it.
void expect_none_left(const std::string& marker) {
  for (pid_t pid : alive_with(marker)) {
    ADD_FAILURE() << "left behind: " << pid << " sleep " << marker;
    kill(pid, SIGKILL);
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(RunCapture, TimesOutAtTheDeadlineWhenTheChildClosedItsPipes) {
  const auto t0 = std::chrono::steady_clock::now();
  Captured c = run_capture({"/bin/sh", "-c", "exec >/dev/null 2>&1; sleep 77.201"}, 1.0);
  EXPECT_TRUE(c.timed_out);
  EXPECT_EQ(c.exit_code, -1);
  EXPECT_LT(seconds_since(t0), 1.0 + kContainmentKillWaitS);
  expect_none_left("77.201");
}

TEST(RunCapture, ABackgroundChildIsNamedAndKilled) {
  // The pause lets the background child reach its exec, so that it is named
  // as sleep, not as the shell it was forked from.
  Captured c = run_capture({"/bin/sh", "-c", "sleep 77.202 & sleep 0.3; echo started"}, 30);
  EXPECT_FALSE(c.timed_out);
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_EQ(c.out, "started\n");
  ASSERT_EQ(c.leftovers.size(), 1u);
  EXPECT_EQ(c.leftovers[0].comm, "sleep");
  EXPECT_EQ(c.leftovers[0].cmdline, "sleep 77.202");
  expect_none_left("77.202");
}

// A harness killed between fork and resume(): its paused child must not wait for
// it for ever, nor start the program. The "harness" here is a forked process that
// starts a paused child, hands its pid back and exits without releasing it.
TEST(Spawn, APausedChildWhoseHarnessDiedExitsWithoutStarting) {
  int back[2];
  ASSERT_EQ(pipe(back), 0);
  const pid_t harness = fork();
  ASSERT_GE(harness, 0);
  if (harness == 0) {
    close(back[0]);
    ChildSpec spec;
    spec.path = "/bin/sleep";
    spec.argv = {"sleep", "77.203"};
    spec.env = clean_environment();
    std::string error;
    auto child = Child::start_paused(spec, error);
    const pid_t pid = child ? child->pid() : -1;
    ssize_t w = write(back[1], &pid, sizeof pid);
    (void)w;
    _exit(0);  // no destructor, no resume: as if killed
  }
  close(back[1]);
  pid_t paused = -1;
  ASSERT_EQ(read(back[0], &paused, sizeof paused), ssize_t(sizeof paused));
  close(back[0]);
  int status = 0;
  ASSERT_EQ(waitpid(harness, &status, 0), harness);
  ASSERT_GT(paused, 0);
  // Orphaned, it is reaped by init (or by a subreaper above the test): gone, or a zombie.
  const std::string dir = "/proc/" + std::to_string(paused);
  const auto t0 = std::chrono::steady_clock::now();
  while (running(dir) && seconds_since(t0) < 5) usleep(10000);
  EXPECT_FALSE(running(dir)) << "the paused child " << paused << " still runs";
  if (running(dir)) kill(paused, SIGKILL);
  expect_none_left("77.203");
}

// Each way, where the machine allows it: a setsid daemon the child left is
// a member once the child is reaped, and kill() ends it; release() leaves it.
class EachWay : public testing::TestWithParam<ContainmentWay> {
 protected:
  // Runs `script` contained and reaps it; skips the test when this machine
  // cannot contain that way.
  void run_contained(Containment& box, const std::string& script) {
    if (box.way() != GetParam()) GTEST_SKIP() << "this machine cannot make a group that way";
    ChildSpec spec;
    spec.path = "/bin/sh";
    spec.argv = {"sh", "-c", script};
    spec.env = clean_environment();
    spec.containment = &box;
    std::string error;
    auto child = Child::start_paused(spec, error);
    ASSERT_TRUE(child) << error;
    ASSERT_TRUE(child->resume(error)) << error;
    int status = 0;
    rusage ru{};
    ASSERT_TRUE(child->wait(status, ru));
  }
};

TEST_P(EachWay, KillEndsWhatTheChildLeft) {
  const std::string marker = "77.21" + std::to_string(int(GetParam()));
  {
    Containment box(containment::unique_name("test"), GetParam());
    run_contained(box, "setsid sleep " + marker + " & sleep 0.1");
    if (IsSkipped()) return;
    auto members = box.members();
    ASSERT_EQ(members.size(), 1u);
    EXPECT_EQ(members[0].cmdline, "sleep " + marker);
    box.kill();
    EXPECT_TRUE(alive_with(marker).empty());
    EXPECT_TRUE(box.members().empty());
  }
  expect_none_left(marker);
}

TEST_P(EachWay, ReleaseLeavesItRunning) {
  const std::string marker = "77.22" + std::to_string(int(GetParam()));
  {
    Containment box(containment::unique_name("test"), GetParam());
    run_contained(box, "setsid sleep " + marker + " & sleep 0.1");
    if (IsSkipped()) return;
    box.release();
  }
  EXPECT_EQ(alive_with(marker).size(), 1u);
  for (pid_t pid : alive_with(marker)) kill(pid, SIGKILL);
}

std::string way_name(const testing::TestParamInfo<ContainmentWay>& info) {
  static const char* const names[] = {"CgroupV2", "FreezerV1", "Subreaper"};
  return names[int(info.param)];
}

INSTANTIATE_TEST_SUITE_P(Containment, EachWay,
                         testing::Values(ContainmentWay::CgroupV2, ContainmentWay::FreezerV1,
                                         ContainmentWay::Subreaper),
                         way_name);

}  // namespace
}  // namespace mh
