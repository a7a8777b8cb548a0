// Interruption, resume and a report that cannot be written, through the
// harness binary: SIGINT in the middle of a suite and of a comparison, a second
// SIGINT, --resume, and what is left behind (reports, processes, directories).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "sys/containment.h"
#include "sys/cgroup.h"
#include "test_util.h"

namespace mh {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A harness started in the background, its output in files, with its own
// TMPDIR (where every run makes its temporary directory) and the test
// workloads (misbehave) on its workload path.
class Background {
 public:
  Background(const std::string& name, std::vector<std::string> args, bool test_workloads = true)
      : dir_(test::scratch(name)) {
    fs::create_directories(dir_ + "/tmp");
    args.insert(args.begin(), HARNESS_BIN);
    pid_ = fork();
    if (pid_ == 0) {
      setenv("TMPDIR", (dir_ + "/tmp").c_str(), 1);
      if (test_workloads) setenv("MEMHARNESS_WORKLOAD_DIR", TEST_WORKLOAD_DIR, 1);
      int out = open((dir_ + "/stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = open((dir_ + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, 1);
      dup2(err, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~Background() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  void signal(int sig) const { kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  // The exit code, or 128 + the signal that killed it; -1 if still running after `limit`.
  int wait(std::chrono::seconds limit = 120s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < end) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string err() const { return test::slurp(path("stderr")); }
  std::string out() const { return test::slurp(path("stdout")); }
  // Processes that a run of this harness started, still alive.
  int survivors() const {
    const std::string needle = "TMPDIR=" + dir_ + "/tmp/memharness-run-";
    int n = 0;
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string pid = e.path().filename();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      std::string env = test::slurp(e.path().string() + "/environ");
      for (char& c : env)
        if (c == '\0') c = '\n';
      if (env.find(needle) != std::string::npos) ++n;
    }
    return n;
  }
  // Temporary directories of runs left behind.
  int leftover_dirs() const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir_ + "/tmp"))
      if (e.path().filename().string().rfind("memharness-run-", 0) == 0) ++n;
    return n;
  }

 private:
  std::string dir_;
  pid_t pid_ = -1;
};

// The journal a plan keeps beside its report `path` (PATH.journal-XXXXXX), or "".
std::string journal_of(const std::string& path) {
  const fs::path p(path);
  std::error_code ec;  // the folder may not exist yet
  for (const auto& e : fs::directory_iterator(p.parent_path(), ec))
    if (e.path().filename().string().rfind(p.filename().string() + ".journal-", 0) == 0) return e.path().string();
  return "";
}

// Whole lines in a file.
size_t lines_in(const std::string& path) {
  const std::string text = test::slurp(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Waits until the report at `path`, or its journal while the plan goes on,
// holds at least `runs` runs.
bool wait_for_runs(const std::string& path, size_t runs, std::chrono::seconds limit = 90s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (fs::exists(path)) {
      Json j = Json::parse(test::slurp(path), nullptr, false);
      if (!j.is_discarded() && j["runs"].size() >= runs) return true;
    }
    // The header, then a line per run.
    if (auto journal = journal_of(path); !journal.empty() && lines_in(journal) >= runs + 1) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

std::vector<std::string> sleep_plan(const std::string& out) {
  return {"--workload", "misbehave", "--mode", "sleep", "--ms", "400", "-a", "glibc", "-a", "jemalloc",
          "--runs", "3", "--quiet", "--out", out};
}

TEST(Interrupt, SigintInTheMiddleOfASuiteLeavesAValidPartialReportAndNothingRunning) {
  const std::string report = test::scratch("suite-int.json");
  Background s("suite-int", {"--suite", "quick", "-a", "glibc", "--runs", "1", "--quiet", "--out", report},
               /*test_workloads=*/false);
  ASSERT_TRUE(wait_for_runs(report, 1));
  s.signal(SIGINT);
  EXPECT_EQ(s.wait(), 130) << s.err();
  Json j = test::load_json(report);
  EXPECT_EQ(j["complete"], false);
  EXPECT_GE(j["runs"].size(), 1u);
  EXPECT_NE(s.out().find("report: " + report + " (incomplete)"), std::string::npos) << s.out();
  EXPECT_NE(s.out().find("runs ok"), std::string::npos);  // the table of what was done
  EXPECT_NE(s.err().find("--resume " + report), std::string::npos) << s.err();
  EXPECT_EQ(s.survivors(), 0);
  EXPECT_EQ(s.leftover_dirs(), 0);
  EXPECT_FALSE(fs::exists(report + ".tmp." + std::to_string(getpid())));
}

TEST(Interrupt, ResumeKeepsTheRunsDoneAndEndsLikeAnUninterruptedRun) {
  const std::string report = test::scratch("resume.json");
  {
    Background h("resume-a", sleep_plan(report));
    ASSERT_TRUE(wait_for_runs(report, 2));
    h.signal(SIGINT);
    ASSERT_EQ(h.wait(), 130) << h.err();
    EXPECT_EQ(h.survivors(), 0);
    EXPECT_EQ(h.leftover_dirs(), 0);
  }
  Json partial = test::load_json(report);
  ASSERT_EQ(partial["complete"], false);
  const size_t done = partial["runs"].size();
  ASSERT_LT(done, 6u);

  // Another plan is refused, naming the difference, and the report is untouched.
  auto other = sleep_plan(report);
  other[11] = "4";  // --runs 4
  other.insert(other.end(), {"--resume", report});
  Background refused("resume-b", other);
  EXPECT_EQ(refused.wait(), 2);
  EXPECT_NE(refused.err().find("rounds"), std::string::npos) << refused.err();
  EXPECT_EQ(test::load_json(report), partial);

  auto again = sleep_plan(report);
  again.insert(again.end(), {"--resume", report});
  Background resumed("resume-c", again);
  EXPECT_EQ(resumed.wait(), 0) << resumed.err();
  Json full = test::load_json(report);
  EXPECT_EQ(full["complete"], true);
  ASSERT_EQ(full["runs"].size(), 6u);
  size_t kept = 0;
  for (size_t i = 0; i < done; ++i)
    if (partial["runs"][i]["status"] != "interrupted") {
      EXPECT_EQ(full["runs"][i], partial["runs"][i]) << "run " << i << " was not kept as it was";
      ++kept;
    }
  EXPECT_NE(resumed.out().find(std::to_string(kept) + " runs kept"), std::string::npos) << resumed.out();

  // The same summary as a run that was never interrupted: every run ok, and
  // the figure that does not vary has the same median.
  const std::string straight = test::scratch("straight.json");
  Background u("resume-d", sleep_plan(straight));
  ASSERT_EQ(u.wait(), 0) << u.err();
  Json plain = test::load_json(straight);
  ASSERT_EQ(full["summary"].size(), plain["summary"].size());
  for (size_t i = 0; i < plain["summary"].size(); ++i) {
    EXPECT_EQ(full["summary"][i]["allocator"], plain["summary"][i]["allocator"]);
    EXPECT_EQ(full["summary"][i]["runs_ok"], 3);
    EXPECT_EQ(full["summary"][i]["metrics"]["slept_ms"], plain["summary"][i]["metrics"]["slept_ms"]);
  }
}

TEST(Interrupt, AnInterruptedSoakKeepsWhatItMeasuredAndResumes) {
  const std::string report = test::scratch("soak-int.json");
  const std::vector<std::string> plan = {"--workload", "misbehave", "--mode", "sleep", "--ms", "100", "--soak", "3s",
                                         "-a", "glibc", "--runs", "1", "--quiet", "--out", report};
  {
    Background h("soak-int-a", plan);
    std::this_thread::sleep_for(1500ms);
    h.signal(SIGINT);
    ASSERT_EQ(h.wait(), 130) << h.err();
    EXPECT_EQ(h.survivors(), 0);
  }
  const Json partial = test::load_json(report);
  EXPECT_EQ(partial["complete"], false);
  ASSERT_EQ(partial["runs"].size(), 1u);
  const Json& cut = partial["runs"][0];
  EXPECT_EQ(cut["status"], "interrupted");
  EXPECT_EQ(cut["soak"]["complete"], false);
  EXPECT_NE(cut["soak"]["incomplete_why"].get<std::string>().find("interrupted after"), std::string::npos)
      << cut["soak"];
  EXPECT_GE(cut["soak"]["repetitions"].get<int>(), 1);
  EXPECT_LT(cut["soak"]["ran_s"].get<double>(), 3);
  EXPECT_GT(cut["samples"]["t_ms"].size(), 10u);

  // Another duration is another command.
  auto other = plan;
  other[7] = "4s";
  other.insert(other.end(), {"--resume", report});
  Background refused("soak-int-b", other);
  EXPECT_EQ(refused.wait(), 2);
  EXPECT_NE(refused.err().find("soak_s"), std::string::npos) << refused.err();

  auto again = plan;
  again.insert(again.end(), {"--resume", report});
  Background resumed("soak-int-c", again);
  EXPECT_EQ(resumed.wait(), 0) << resumed.err();
  const Json full = test::load_json(report);
  EXPECT_EQ(full["complete"], true);
  ASSERT_EQ(full["runs"].size(), 1u);
  EXPECT_EQ(full["runs"][0]["soak"]["complete"], true);
  EXPECT_GE(full["runs"][0]["soak"]["ran_s"].get<double>(), 3);
}

TEST(Interrupt, AKilledHarnessLeavesAJournalThatResumesComparesAndMerges) {
  const std::string report = test::scratch("killed.json");
  std::string journal;
  {
    Background h("killed-a", sleep_plan(report));
    ASSERT_TRUE(wait_for_runs(report, 3));
    h.signal(SIGKILL);
    ASSERT_EQ(h.wait(), 128 + SIGKILL);
    journal = journal_of(report);
  }
  std::this_thread::sleep_for(600ms);  // the run in flight (400 ms) ends on its own
  ASSERT_FALSE(fs::exists(report));    // the report is written once, at the end
  ASSERT_FALSE(journal.empty());
  const size_t done = lines_in(journal) - 1;
  ASSERT_GE(done, 3u);
  // A crash in the middle of writing a run leaves half a line: left out, with a warning.
  { std::ofstream(journal, std::ios::app) << "{\"workload\": \"misbeh"; }

  const std::string merged_out = test::scratch("killed-merged.json"), compared_out = test::scratch("killed-c.json");
  Background merged("killed-m", {"merge", journal, "-o", merged_out});
  EXPECT_EQ(merged.wait(), 0) << merged.err();
  EXPECT_NE(merged.err().find("line " + std::to_string(done + 2) + ": the last line is cut short"), std::string::npos)
      << merged.err();
  EXPECT_EQ(test::load_json(merged_out)["runs"].size(), done);

  Background compared("killed-c", {"compare", journal, journal, "--baseline-allocator", "glibc",
                                   "--candidate-allocator", "jemalloc", "--quiet", "-o", compared_out});
  const int rc = compared.wait();
  EXPECT_TRUE(rc == 0 || rc == 1) << rc << compared.err();  // a verdict either way
  EXPECT_TRUE(fs::exists(compared_out)) << compared.err();

  auto again = sleep_plan(report);
  again.erase(again.end() - 2, again.end());  // no --out: the report the journal was kept for
  again.insert(again.end(), {"--resume", journal});
  Background resumed("killed-r", again);
  EXPECT_EQ(resumed.wait(), 0) << resumed.err();
  Json full = test::load_json(report);
  EXPECT_EQ(full["complete"], true);
  EXPECT_EQ(full["runs"].size(), 6u);
  EXPECT_NE(resumed.out().find(std::to_string(done) + " runs kept"), std::string::npos) << resumed.out();
  EXPECT_EQ(journal_of(report), journal);  // the new plan's journal is gone with the report written; the old one stays
}

// An argument that is not UTF-8 is part of the run's identity: the run is
// journaled with it escaped (\xff), and a resume of the journal knows the run
// it kept for the one the command asks for.
TEST(Interrupt, AnArgumentThatIsNotUtf8KeepsTheRunsIdentityThroughAResume) {
  const std::string report = test::scratch("bytes-arg.json"), flag = test::scratch("bytes-arg.flag");
  // The first run leaves the flag and ends; the second waits while it is there.
  const std::vector<std::string> plan = {
      "-a", "glibc", "-n", "2", "--quiet", "--", "/bin/sh", "-c",
      "if [ -e \"$1\" ]; then sleep 57.625; fi; : > \"$1\"", "sh", flag, "arg-\xff\xfe"};
  std::vector<std::string> first = {"--out", report};
  first.insert(first.end(), plan.begin(), plan.end());
  std::string journal;
  {
    Background h("bytes-arg-a", first);
    ASSERT_TRUE(wait_for_runs(report, 1, 60s)) << h.err();
    h.signal(SIGKILL);
    ASSERT_EQ(h.wait(), 128 + SIGKILL);
    journal = journal_of(report);
  }
  const Captured left = run_capture({"pgrep", "-f", "sleep 57.625"});
  std::istringstream pids(left.out);
  for (pid_t pid; pids >> pid;) kill(pid, SIGKILL);
  ASSERT_FALSE(journal.empty());
  ASSERT_EQ(lines_in(journal), 2u) << test::slurp(journal);
  fs::remove(flag);

  std::vector<std::string> again = {"--resume", journal};
  again.insert(again.end(), plan.begin(), plan.end());
  Background resumed("bytes-arg-r", again);
  ASSERT_EQ(resumed.wait(), 0) << resumed.err();
  EXPECT_NE(resumed.out().find("1 runs kept"), std::string::npos) << resumed.out();
  const Json full = test::load_json(report);
  ASSERT_EQ(full["runs"].size(), 2u);
  for (const auto& run : full["runs"]) EXPECT_EQ(run["params"]["command"].back(), "arg-\\xff\\xfe");
  EXPECT_EQ(full["runs"][0]["params"], full["runs"][1]["params"]);
  EXPECT_EQ(full["context"]["argv"].back(), "arg-\\xff\\xfe");
}

TEST(Interrupt, CompareStoppedAndResumedSaysWhetherItIsComplete) {
  const std::string out = test::scratch("cmp-int.json");
  const std::string runs = out.substr(0, out.size() - 5) + "-runs.json";
  std::vector<std::string> cmd = {"compare", "--baseline", "glibc", "--candidate", "jemalloc", "--workload",
                                  "misbehave", "--mode", "sleep", "--ms", "300", "--runs", "3", "--seed", "11",
                                  "--quiet", "--out", out};
  {
    Background h("cmp-a", cmd);
    ASSERT_TRUE(wait_for_runs(runs, 2));
    h.signal(SIGINT);
    ASSERT_EQ(h.wait(), 130) << h.err();
    EXPECT_EQ(h.survivors(), 0);
    EXPECT_EQ(h.leftover_dirs(), 0);
  }
  EXPECT_EQ(test::load_json(runs)["complete"], false);
  EXPECT_EQ(test::load_json(out)["complete"], false);
  const size_t done = test::load_json(runs)["runs"].size();
  EXPECT_LT(done, 9u);

  cmd.insert(cmd.end(), {"--resume", runs});
  Background r("cmp-b", cmd);
  const int rc = r.wait();
  EXPECT_TRUE(rc == 0 || rc == 1) << rc << r.err();  // a verdict either way
  Json full = test::load_json(runs);
  EXPECT_EQ(full["complete"], true);
  EXPECT_EQ(full["runs"].size(), 9u);
  EXPECT_EQ(full["context"]["plan"]["shuffle_seed"], 11);
  EXPECT_EQ(test::load_json(out)["complete"], true);
}

TEST(Interrupt, ASecondSigintKillsAtOnceAndKeepsTheJournal) {
  const std::string report = test::scratch("twice.json");
  Background h("twice", {"--workload", "misbehave", "--mode", "stubborn", "-a", "glibc", "--runs", "2", "--timeout",
                         "0.3", "--quiet", "--out", report});
  ASSERT_TRUE(wait_for_runs(report, 1, 30s));  // the first run timed out (SIGTERM ignored, then SIGKILL)
  std::this_thread::sleep_for(200ms);          // the second is running
  const auto t0 = std::chrono::steady_clock::now();
  h.signal(SIGINT);
  std::this_thread::sleep_for(100ms);
  h.signal(SIGINT);
  EXPECT_EQ(h.wait(10s), 130);
  // Without the second SIGINT the stubborn workload would have had 2 s of grace.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1500ms);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(h.survivors(), 0);
  // No report: the finished run is in the journal, which the message names.
  EXPECT_FALSE(fs::exists(report));
  const std::string journal = journal_of(report);
  ASSERT_FALSE(journal.empty());
  EXPECT_NE(h.err().find("the finished runs are in " + journal), std::string::npos) << h.err();
  ASSERT_EQ(lines_in(journal), 2u);  // the header and the run
  EXPECT_EQ(Json::parse(test::slurp(journal).substr(test::slurp(journal).find('\n') + 1))["status"], "timeout");
  fs::remove(journal);
}

TEST(Interrupt, SigtermStopsTheRunsAndWritesTheReportAsTheFirstSigintDoes) {
  const std::string report = test::scratch("term.json");
  Background h("term", sleep_plan(report));
  ASSERT_TRUE(wait_for_runs(report, 2));
  h.signal(SIGTERM);
  EXPECT_EQ(h.wait(), 143) << h.err();
  Json j = test::load_json(report);
  EXPECT_EQ(j["complete"], false);
  EXPECT_GE(j["runs"].size(), 2u);
  EXPECT_LT(j["runs"].size(), 6u);
  EXPECT_NE(h.err().find("--resume " + report), std::string::npos) << h.err();
  EXPECT_EQ(h.survivors(), 0);
  EXPECT_EQ(h.leftover_dirs(), 0);
  EXPECT_TRUE(journal_of(report).empty());
}

// A second signal, whichever the two are, ends the harness in the grace it
// gives a program that ignores SIGTERM, at once, with 128 + the second.
TEST(Interrupt, ASecondSignalOfAnyKindEndsTheHarnessAtOnce) {
  for (auto [first, second] : {std::pair{SIGTERM, SIGTERM}, std::pair{SIGTERM, SIGINT}, std::pair{SIGINT, SIGTERM}}) {
    SCOPED_TRACE(std::string(strsignal(first)) + " then " + strsignal(second));
    const std::string report = test::scratch("twice-" + std::to_string(first) + "-" + std::to_string(second) + ".json");
    Background h("twice-any-" + std::to_string(first) + "-" + std::to_string(second), {"--workload", "misbehave", "--mode", "stubborn", "-a", "glibc", "--runs", "2",
                               "--timeout", "0.3", "--quiet", "--out", report});
    ASSERT_TRUE(wait_for_runs(report, 1, 30s));
    std::this_thread::sleep_for(200ms);  // the second run is running
    const auto t0 = std::chrono::steady_clock::now();
    h.signal(first);
    std::this_thread::sleep_for(100ms);
    h.signal(second);
    EXPECT_EQ(h.wait(10s), 128 + second);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1500ms);  // not the 2 s of grace
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(h.survivors(), 0);
    EXPECT_FALSE(fs::exists(report));
    const std::string journal = journal_of(report);
    EXPECT_NE(h.err().find("the finished runs are in " + journal), std::string::npos) << h.err();
    if (!journal.empty()) fs::remove(journal);
  }
}

// A harness that waits on a file that never comes (a FIFO given to
// --resume, opened for reading) ends with the second SIGTERM; a harness that
// refuses such a file at once has nothing to end, and leaves the report too.
TEST(Interrupt, ASecondSigtermEndsAHarnessBlockedInAnOpen) {
  const std::string fifo = test::scratch("resume.fifo"), report = test::scratch("blocked.json");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  { std::ofstream(report) << "kept"; }
  auto plan = sleep_plan(report);
  plan.insert(plan.end(), {"--resume", fifo});
  Background h("blocked", plan);
  const int refused = h.wait(1s);
  if (refused == -1) {
    h.signal(SIGTERM);
    std::this_thread::sleep_for(200ms);
    const auto t0 = std::chrono::steady_clock::now();
    h.signal(SIGTERM);
    EXPECT_EQ(h.wait(5s), 143) << h.err();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  } else {
    EXPECT_EQ(refused, 2) << h.err();
  }
  EXPECT_EQ(h.survivors(), 0);
  EXPECT_EQ(test::slurp(report), "kept");
  fs::remove(fifo);
}

// A process that is not a zombie: a killed one may wait a moment for init.
bool running(pid_t pid) {
  const std::string stat = test::slurp("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

TEST(Interrupt, ASecondSigintEndsWhatLeftTheProcessGroup) {
  {
    Containment probe(containment::unique_name("probe"), ContainmentWay::CgroupV2);
    if (probe.way() != ContainmentWay::CgroupV2) GTEST_SKIP() << "no cgroup v2 group can be made here";
  }
  const std::string pidfile = test::scratch("setsid.pid");
  fs::remove(pidfile);
  setenv("MEMHARNESS_CONTAINMENT", "cgroup", 1);
  Background h("setsid", {"-a", "glibc", "--runs", "1", "--quiet", "--out", test::scratch("setsid.json"), "--",
                          "/bin/sh", "-c", "setsid sleep 97 & echo $! > " + pidfile + "; sleep 60"});
  unsetenv("MEMHARNESS_CONTAINMENT");
  pid_t daemon = 0;
  for (int i = 0; i < 200 && daemon == 0; ++i) {
    std::this_thread::sleep_for(50ms);
    daemon = static_cast<pid_t>(std::atoi(test::slurp(pidfile).c_str()));
  }
  ASSERT_GT(daemon, 0) << h.err();
  ASSERT_TRUE(running(daemon));
  h.signal(SIGINT);
  std::this_thread::sleep_for(100ms);
  h.signal(SIGINT);
  EXPECT_EQ(h.wait(10s), 130);
  for (int i = 0; i < 50 && running(daemon); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(running(daemon)) << "the setsid child " << daemon << " outlived the harness";
  if (running(daemon)) kill(daemon, SIGKILL);
}

TEST(Interrupt, AReportThatCannotBeWrittenKeepsTheRunsElsewhere) {
  const std::string dir = test::scratch("vanishing");
  const std::string report = dir + "/report.json";
  Background h("vanish", {"--workload", "misbehave", "--mode", "sleep", "--ms", "300", "-a", "glibc", "--runs", "4",
                          "--quiet", "--out", report});
  ASSERT_TRUE(wait_for_runs(report, 1));
  // The directory becomes a file: no report can be written there any more.
  fs::rename(dir, dir + ".gone");
  { std::ofstream(dir) << "not a directory"; }
  EXPECT_EQ(h.wait(), 1);
  const std::string err = h.err();
  auto at = err.find("runs done are in ");
  ASSERT_NE(at, std::string::npos) << err;
  std::string rescue = err.substr(at + 17);
  rescue = rescue.substr(0, rescue.find('\n'));
  // The journal, already open, took every run: the plan went to its end.
  Json j = test::load_json(rescue);
  EXPECT_EQ(j["runs"].size(), 4u);
  EXPECT_EQ(j["complete"], true);
  fs::remove(rescue);
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

// The cgroups a harness of pid `pid` made (memharness-PID-*) that are there
// now, in the memory, freezer and v2 hierarchies.
std::vector<std::string> groups_of(pid_t pid) {
  std::vector<std::string> out;
  const std::string prefix = "memharness-" + std::to_string(pid) + "-";
  for (const std::string& parent : {cgroup::own_dir("memory"), cgroup::own_dir("freezer"), cgroup::own_dir("")}) {
    std::error_code ec;
    if (!parent.empty())
      for (const auto& e : fs::directory_iterator(parent, ec))
        if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().string());
  }
  return out;
}

std::string joined(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& s : list) out += s + " ";
  return out;
}

// Waits until the harness has a memory group for its run; its pid, 0 when none came.
pid_t wait_for_memory_group(const Background& h) {
  const std::string parent = cgroup::own_dir("memory").empty() ? cgroup::own_dir("") : cgroup::own_dir("memory");
  for (int i = 0; i < 500; ++i) {
    for (const auto& g : groups_of(h.pid()))
      if (g.rfind(parent + "/", 0) == 0) return h.pid();
    std::this_thread::sleep_for(10ms);
  }
  return 0;
}

TEST(Interrupt, EveryRunHasAMemoryGroupAndNoGroupOutlivesTheHarness) {
  if (cgroup::own_dir("memory").empty() && !cgroup::v2_memory_why_not().empty())
    GTEST_SKIP() << "no memory cgroup can be made here";
  Background h("groups-run", {"--workload", "misbehave", "--mode", "sleep", "--ms", "600", "-a", "glibc", "--runs",
                              "1", "--quiet", "--out", test::scratch("groups-run.json")});
  const pid_t pid = h.pid();
  EXPECT_EQ(wait_for_memory_group(h), pid) << "no memory group of the run without a limit: " << joined(groups_of(pid));
  EXPECT_EQ(h.wait(60s), 0) << h.err();
  EXPECT_TRUE(groups_of(pid).empty()) << joined(groups_of(pid));
}

TEST(Interrupt, NoGroupOutlivesASigint) {
  if (cgroup::own_dir("memory").empty() && !cgroup::v2_memory_why_not().empty())
    GTEST_SKIP() << "no memory cgroup can be made here";
  for (int signals : {1, 2}) {
    Background h("groups-sigint-" + std::to_string(signals), {"--workload", "misbehave", "--mode", "stubborn", "-a", "glibc", "--runs", "1",
                                   "--timeout", "30", "--memory-limit", "256M", "--quiet", "--out",
                                   test::scratch("groups-sigint-" + std::to_string(signals) + ".json")});
    const pid_t pid = h.pid();
    ASSERT_EQ(wait_for_memory_group(h), pid) << h.err();
    std::this_thread::sleep_for(200ms);
    for (int i = 0; i < signals; ++i) {
      h.signal(SIGINT);
      std::this_thread::sleep_for(100ms);
    }
    EXPECT_EQ(h.wait(30s), 130) << h.err();
    EXPECT_TRUE(groups_of(pid).empty()) << signals << " SIGINT: " << joined(groups_of(pid));
    EXPECT_EQ(h.survivors(), 0);
  }
}

// The JSON of a squeeze at `path` once it holds `probes` probes of its first search, else null.
Json squeeze_with_probes(const std::string& path, size_t probes, std::chrono::seconds limit = 90s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    Json j = Json::parse(test::slurp(path), nullptr, false);
    if (!j.is_discarded() && j.contains("results") && !j["results"].empty() &&
        j["results"][0].value("probes", Json::array()).size() >= probes)
      return j;
    std::this_thread::sleep_for(50ms);
  }
  return nullptr;
}

// The bracket a finished search reports, checked against its probes: its top
// is the limit found and kept the speed, its bottom was shown not to (slower,
// OOM-killed or failed: never a limit on the threshold), and every limit on
// the threshold between them is inside what it names.
void expect_bracket_of_its_probes(const Json& e) {
  ASSERT_TRUE(e.contains("limit_bytes")) << e.dump();
  const uint64_t lo = e["bracket_bytes"][0], hi = e["bracket_bytes"][1];
  EXPECT_EQ(hi, e["limit_bytes"].get<uint64_t>());
  EXPECT_LT(lo, hi);
  EXPECT_EQ(std::count_if(e["probes"].begin(), e["probes"].end(), [&](const Json& p) { return p["limit_bytes"] == hi; }), 1)
      << "the limit found was tried: " << e.dump();
  for (const auto& p : e["probes"]) {
    const uint64_t limit = p["limit_bytes"];
    ASSERT_TRUE(p["on_threshold"].is_boolean()) << p.dump();
    if (p["on_threshold"].get<bool>()) {
      EXPECT_FALSE(p["keeps"].get<bool>()) << p.dump();
    }
    if (limit == hi) {
      EXPECT_TRUE(p["keeps"].get<bool>()) << p.dump();
    }
    if (limit == lo) {
      EXPECT_FALSE(p["keeps"].get<bool>() || p["on_threshold"].get<bool>()) << p.dump();
    }
    if (limit > lo && limit < hi) {
      EXPECT_TRUE(p["on_threshold"].get<bool>()) << "a limit inside the bracket must be on the threshold: " << p.dump();
      ASSERT_TRUE(e["on_threshold_bytes"].is_array()) << e.dump();
      EXPECT_GE(limit, e["on_threshold_bytes"][0].get<uint64_t>());
      EXPECT_LE(limit, e["on_threshold_bytes"][1].get<uint64_t>());
    }
  }
}

TEST(Interrupt, ASqueezeStoppedAndResumedKeepsItsProbesAndEndsWithItsBracket) {
  if (cgroup::own_dir("memory").empty() && !cgroup::v2_memory_why_not().empty())
    GTEST_SKIP() << "no memory cgroup can be made here";
  const std::string out = test::scratch("squeeze-resume.json");
  const std::vector<std::string> args = {"squeeze", "-a", "glibc", "-w", "burst-writefile", "--smoke", "--runs", "5",
                                         "--max-rounds", "8", "--confirm-rounds", "1", "--max-probes", "8",
                                         "--threshold", "12.5", "--seed", "7", "-q", "-o", out};
  Background h("squeeze-resume", args, false);
  const Json first = squeeze_with_probes(out, 1);
  ASSERT_FALSE(first.is_null()) << h.err();
  h.signal(SIGINT);
  ASSERT_EQ(h.wait(60s), 130) << h.err();
  EXPECT_NE(h.err().find("to go on, run the same command with -o " + out), std::string::npos) << h.err();
  EXPECT_EQ(h.survivors(), 0);
  EXPECT_EQ(h.leftover_dirs(), 0);
  const Json stopped = test::load_json(out);
  EXPECT_FALSE(stopped["complete"].get<bool>());
  const Json kept = first["results"][0]["probes"][0];

  const auto r = test::run_harness(args, 300);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_NE(r.err.find("resuming " + out), std::string::npos) << r.err;
  const Json done = test::load_json(out);
  EXPECT_TRUE(done["complete"].get<bool>());
  const Json& e = done["results"][0];
  ASSERT_GE(e["probes"].size(), 2u) << e.dump();
  EXPECT_LE(e["probes"].size(), 8u);
  // --threshold is the allowed change every probe was judged on.
  EXPECT_DOUBLE_EQ(done["question"]["threshold"].get<double>(), 0.125) << done["question"].dump();
  for (const auto& p : e["probes"])
    if (p["figures"]["fom_allowed"].is_number()) {
      EXPECT_DOUBLE_EQ(p["figures"]["fom_allowed"].get<double>(), 0.125) << p.dump();
    }
  // The probe made before the stop is the resumed search's first, as it was.
  EXPECT_EQ(e["probes"][0]["limit_bytes"], kept["limit_bytes"]);
  EXPECT_GE(e["probes"][0]["rounds"].get<int>(), kept["rounds"].get<int>());
  if (r.exit_code == 0) {
    expect_bracket_of_its_probes(e);
    EXPECT_NE(r.out.find("burst-writefile    glibc"), std::string::npos) << r.out;
  } else {
    // No limit found: it says why, and names none (not even the untried top).
    EXPECT_FALSE(e.value("why_done", std::string()).empty()) << e.dump();
    EXPECT_FALSE(e.contains("limit_bytes")) << e.dump();
  }
}

}  // namespace
}  // namespace mh
