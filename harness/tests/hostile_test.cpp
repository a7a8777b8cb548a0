// The harness under hostile use: whatever its output, a report or a program does,
// it never dies of a signal and never leaves a process behind.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <chrono>
#include <sstream>
#include <filesystem>
#include <string>

#include "test_util.h"

namespace mh {
namespace {

// `harness --list | head -c 1`: the reader goes away after one byte, with more
// than a (shrunken, 4 KiB) pipe's worth still to write. The harness ends with
// its usual status and says nothing: no SIGPIPE death, no error message.
TEST(Hostile, AClosedStandardOutputEndsQuietly) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  ASSERT_GE(fcntl(out[1], F_SETPIPE_SZ, 4096), 4096);
  const std::string err_path = test::scratch("list.err");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out[1], 1);
    dup2(err, 2);
    close(out[0]);
    execl(HARNESS_BIN, HARNESS_BIN, "--list", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  char byte;
  ASSERT_EQ(read(out[0], &byte, 1), 1);
  close(out[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(test::slurp(err_path), "");
}

// A program that breaks the mark protocol, run once under the harness with
// its own TMPDIR; `marker` is a word of its command line that nothing else has.
struct HostileRun {
  Captured harness;
  Json report;
  double seconds = 0;
  bool left_running = false, tmp_left = false;
};

HostileRun run_hostile(const std::string& name, const std::string& script, const std::string& marker) {
  namespace fs = std::filesystem;
  const std::string out = test::scratch(name + ".json"), tmp = test::scratch(name + "-tmp");
  fs::create_directories(tmp);
  HostileRun h;
  const auto t0 = std::chrono::steady_clock::now();
  h.harness = run_capture({"/usr/bin/env", "TMPDIR=" + tmp, HARNESS_BIN, "-a", "glibc", "-n", "1", "--timeout", "40", "--out", out,
                           "--", "bash", "-c", script},
                          60);
  h.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Captured left = run_capture({"pgrep", "-f", marker});
  h.left_running = left.exit_code == 0;
  std::istringstream pids(left.out);
  for (pid_t pid; pids >> pid;) kill(pid, SIGKILL);  // a failing test leaves nothing either
  h.tmp_left = !fs::is_empty(tmp);
  if (fs::exists(out)) h.report = test::load_json(out);
  return h;
}

// The run failed naming the broken rule, nothing of it is left, the report is written.
void expect_run_failed(const HostileRun& h, const std::string& because) {
  EXPECT_EQ(h.harness.exit_code, 1) << h.harness.err;
  EXPECT_LT(h.seconds, 30) << "the program was not stopped";
  EXPECT_FALSE(h.left_running) << "a process of the run was left running";
  EXPECT_FALSE(h.tmp_left) << "the run's temporary directory was left";
  ASSERT_TRUE(h.report.is_object()) << "no report: " << h.harness.err;
  const Json& run = h.report["runs"][0];
  EXPECT_EQ(run["status"], "failed") << run["output_tail"];
  EXPECT_NE(run["exit"]["error"].get<std::string>().find("mark protocol: "), std::string::npos) << run["exit"] << run["output_tail"];
  EXPECT_NE(run["exit"]["error"].get<std::string>().find(because), std::string::npos) << run["exit"];
  ASSERT_EQ(run["protocol_errors"].size(), 1u) << run["protocol_errors"];
  EXPECT_NE(run["protocol_errors"][0].get<std::string>().find(because), std::string::npos);
}

TEST(Hostile, AMessageOfTheWrongTypeFailsTheRunNotTheHarness) {
  auto h = run_hostile("wrong-type", R"(echo '{"metric":"x","reason":5}' >&$MEMHARNESS_MARK_FD; sleep 55.125)",
                       "sleep 55.125");
  expect_run_failed(h, "reason: expected a string, found 5");
}

TEST(Hostile, ADeeplyNestedMessageFailsTheRunNotTheHarness) {
  auto h = run_hostile("deep-message",
                       R"(python3 -c 'import os, time
os.write(int(os.environ["MEMHARNESS_MARK_FD"]), b"{\"allocator_stats\":" + b"[" * 200000 + b"]" * 200000 + b"}\n")
time.sleep(55.25)')",
                       "time.sleep.55.25");
  expect_run_failed(h, "allocator_stats[0][0]");
  EXPECT_NE(h.report["runs"][0]["exit"]["error"].get<std::string>().find("nested deeper than 32 levels"),
            std::string::npos);
}

TEST(Hostile, ASyncMarkAfterClosingTheAckPipeFailsTheRun) {
  auto h = run_hostile("closed-ack",
                       R"(eval "exec $MEMHARNESS_ACK_FD<&-"
echo '{"mark":"a","sync":true,"seq":1}' >&$MEMHARNESS_MARK_FD; sleep 55.375)",
                       "sleep 55.375");
  expect_run_failed(h, "the acknowledgement of message 1 could not be written: Broken pipe");
}


// What a program prints, and the names it gives itself, are text only shown:
// whatever their bytes, the report is written (Json::parse here refuses
// anything but UTF-8) and they show with U+FFFD where a byte is not UTF-8.
Json run_printing(const std::string& name, std::vector<std::string> program, Captured& harness) {
  const std::string out = test::scratch(name + ".json");
  std::vector<std::string> args = {"-a", "glibc", "-n", "1", "--quiet", "--timeout", "40", "-o", out, "--"};
  args.insert(args.end(), program.begin(), program.end());
  harness = test::run_harness(args);
  return std::filesystem::exists(out) ? test::load_json(out) : Json();
}

const std::string kReplacement = "\xef\xbf\xbd";

TEST(Hostile, OutputCutInTheMiddleOfACharacterStillMakesAReport) {
  Captured h;
  const Json report = run_printing("euros", {"/usr/bin/python3", "-c", "print('\xe2\x82\xac' * 3000, end='')"}, h);
  ASSERT_EQ(h.exit_code, 0) << h.err;
  ASSERT_TRUE(report.is_object()) << h.err;
  const std::string tail = report["runs"][0]["output_tail"];
  // 9000 bytes printed; the last 4096 begin inside a character, which is left out.
  std::string euros;
  for (int i = 0; i < 1365; ++i) euros += "\xe2\x82\xac";
  EXPECT_EQ(tail, euros);
}

TEST(Hostile, OutputAndNamesThatAreNotUtf8AreShownReplaced) {
  Captured h;
  // The program names its main thread, leaves a child behind that names itself,
  // and prints bytes that are not UTF-8.
  const Json report = run_printing(
      "bytes",
      {"/usr/bin/python3", "-c",
       "import os, sys, time\n"
       "open('/proc/self/comm', 'wb').write(b'\\xff-main')\n"
       "if os.fork() == 0:\n"
       "    open('/proc/self/comm', 'wb').write(b'\\xfe-left')\n"
       "    os.setsid(); time.sleep(58.75); os._exit(0)\n"
       "sys.stdout.buffer.write(b'a\\xffb\\xe2\\x82')\n"
       "sys.stdout.flush(); time.sleep(0.5)\n"},
      h);
  const Captured left = run_capture({"pgrep", "-f", "58.75"});
  std::istringstream pids(left.out);
  for (pid_t pid; pids >> pid;) kill(pid, SIGKILL);
  ASSERT_TRUE(h.exit_code == 0 || h.exit_code == 1) << h.err;  // not 3
  ASSERT_TRUE(report.is_object()) << h.err;
  const Json& run = report["runs"][0];
  EXPECT_EQ(run["output_tail"], "a" + kReplacement + "b" + kReplacement + kReplacement);
  bool main_named = false;
  for (const auto& t : run["threads"]) main_named = main_named || t["name"] == kReplacement + "-main";
  EXPECT_TRUE(main_named) << run["threads"];
  ASSERT_EQ(run["leftover_processes"].size(), 1u) << run["leftover_processes"];
  EXPECT_EQ(run["leftover_processes"][0]["comm"], kReplacement + "-left");
}

}  // namespace
}  // namespace mh
