// A program traced to its exit stop: its peak is the kernel's even when it grew
// after the last sample, and the trace is invisible to it (its signals arrive,
// it can be stopped and continued, a timeout still ends it).
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "test_util.h"

namespace mh {
namespace {

Json run_program(const std::string& name, std::vector<std::string> args, double& wall_s) {
  const std::string out = test::scratch(name + ".json");
  std::vector<std::string> argv = {"-a", "glibc", "--runs", "1", "--quiet", "--out", out};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto t0 = std::chrono::steady_clock::now();
  const Captured c = test::run_harness(argv);
  wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(c.exit_code == 0 || c.exit_code == 1) << c.err;
  return test::load_json(out)["runs"][0];
}

// 120 MiB touched at once just before the exit, with a sample every 5 s: no
// periodic sample sees it, the exit stop does, and agrees with wait4.
TEST(ExitStop, APeakInTheLastIntervalIsTheKernels) {
  double wall_s = 0;
  const Json run = run_program("last", {"--sample-ms", "5000", "--", LAST_INTERVAL, "120"}, wall_s);
  ASSERT_EQ(run["status"], "ok") << run.dump();
  EXPECT_EQ(run["peak_from"], "exit_stop");
  const double peak = run["metrics"]["peak_rss_kb"].get<double>();
  const double maxrss = run["metrics"]["maxrss_kb"].get<double>();
  EXPECT_GE(peak, 120 * 1024);
  EXPECT_NEAR(peak, maxrss, maxrss * 0.01);
  EXPECT_EQ(run["metrics"]["hwm_kb"].get<double>(), peak);
}

// SIGALRM at 1 kHz during 300 million steps of work (about 0.2 s): every signal
// reaches the program's handler, the first ones through the tracer, which then
// gives the trace up rather than slow the program down, and says so.
TEST(ExitStop, ATracedProgramGetsItsSignals) {
  double wall_s = 0;
  const Json run = run_program("alarms", {"--", LAST_INTERVAL, "1", "300"}, wall_s);
  ASSERT_EQ(run["status"], "ok") << run.dump();
  const std::string tail = run["output_tail"];
  const auto at = tail.find("alarms ");
  ASSERT_NE(at, std::string::npos) << tail;
  EXPECT_GE(std::stoi(tail.substr(at + 7)), 50) << tail;
  EXPECT_LT(wall_s, 10);
  EXPECT_NE(run["peak_from"], "exit_stop");
  EXPECT_NE(run["metrics"]["hwm_kb_reason"].get<std::string>().find("signals in a second"), std::string::npos)
      << run["metrics"].dump();
}

// A program that stops itself is stopped as it would be untraced, and goes on
// when continued.
TEST(ExitStop, AStoppedProgramGoesOnWhenContinued) {
  double wall_s = 0;
  const Json run = run_program(
      "stopcont", {"--", "/bin/sh", "-c", "(sleep 0.3; kill -CONT $$) & kill -STOP $$; echo resumed; wait"}, wall_s);
  ASSERT_EQ(run["status"], "ok") << run.dump();
  EXPECT_NE(run["output_tail"].get<std::string>().find("resumed"), std::string::npos);
  EXPECT_LT(wall_s, 10);
}

// A traced program still running at its timeout gets its SIGTERM and ends.
TEST(ExitStop, ATracedProgramEndsAtItsTimeout) {
  double wall_s = 0;
  const Json run = run_program("timeout", {"--timeout", "1", "--", "/bin/sleep", "30"}, wall_s);
  EXPECT_EQ(run["status"], "timeout") << run.dump();
  EXPECT_EQ(run["exit"]["signal"], 15) << run.dump();
  EXPECT_LT(wall_s, 10);
}

}  // namespace
}  // namespace mh
