// The naming of a run's call sites against files a program planted, through
// the harness binary: a FIFO at the path of an object its stacks go through
// (not opened: the frames say why), a FIFO at that object's debug file (the
// naming is given up at --symbolize-timeout), and nothing left running.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "test_util.h"

namespace mh {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A fresh folder with a copy of dl_plugin in it, named `name`.
std::string plugin_copy(const std::string& folder, const std::string& name) {
  const std::string dir = test::scratch(folder);
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(DL_PLUGIN, dir + "/" + name);
  return dir + "/" + name;
}

// A copy of dl_plugin that keeps its symbols but not its DWARF and names a
// debug file beside it, a FIFO there: libdw opens it (blocking) when a frame
// asks for a line.
std::string plugin_with_fifo_debug_file(const std::string& folder) {
  const std::string lib = plugin_copy(folder, "libplanted.so");
  const std::string debug = fs::path(lib).parent_path() / "libplanted.debug";
  { std::ofstream(debug) << ""; }
  EXPECT_EQ(std::system(("objcopy --strip-debug --add-gnu-debuglink='" + debug + "' '" + lib + "'").c_str()), 0);
  fs::remove(debug);
  EXPECT_EQ(mkfifo(debug.c_str(), 0600), 0);
  return lib;
}

// Every frame of the run's call sites (its marks' and its peak's) in `object`.
std::vector<Json> frames_in(const Json& run, const std::string& object) {
  std::vector<Json> out;
  auto take = [&](const Json& sites) {
    for (const auto& site : sites["top"])
      for (const auto& f : site.value("frames", Json::array()))
        if (f["object"] == object) out.push_back(f);
  };
  for (const auto& m : run.value("marks", Json::array()))
    if (m.contains("heap_sites")) take(m["heap_sites"]);
  if (run.contains("heap_sites_peak")) take(run["heap_sites_peak"]);
  return out;
}

Captured run_mapped_fifo(const std::string& lib, const std::string& how, const std::string& report,
                         std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"--ledger", "--heap-sample", "4K", "-a", "glibc", "--runs", "1", "--quiet",
                                   "--timeout", "30", "-o", report};
  args.insert(args.end(), more.begin(), more.end());
  args.insert(args.end(), {"--", MAPPED_FIFO, lib, how});
  return test::run_harness(args, 90);
}

TEST(SymbolizeRun, AFifoLeftAtAMappedPathIsNotOpenedAndItsFramesSayWhy) {
  const std::string lib = plugin_copy("fifo-deleted", "libplanted.so");
  const std::string report = test::scratch("fifo-deleted.json");
  const auto t0 = Clock::now();
  const Captured c = run_mapped_fifo(lib, "deleted", report);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(30));
  ASSERT_FALSE(c.timed_out) << "the harness was still running after 90 s";
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_TRUE(c.leftovers.empty());
  ASSERT_TRUE(fs::exists(lib + " (deleted)"));  // the FIFO was there all along
  const Json run = test::load_json(report)["runs"][0];
  const auto frames = frames_in(run, lib + " (deleted)");
  ASSERT_FALSE(frames.empty()) << run.dump(1);
  for (const auto& f : frames) {
    EXPECT_EQ(f["source"], "none") << f;
    EXPECT_NE(f.value("reason", "").find("not a regular file"), std::string::npos) << f;
  }
  EXPECT_TRUE(run["heap_objects"][lib + " (deleted)"]["build_id"].is_null());
}

TEST(SymbolizeRun, AFifoAtTheDebugFileIsGivenUpAtTheDeadlineWithTheReason) {
  const std::string lib = plugin_with_fifo_debug_file("fifo-debuglink");
  const std::string report = test::scratch("fifo-debuglink.json");
  const auto t0 = Clock::now();
  const Captured c = run_mapped_fifo(lib, "kept", report, {"--symbolize-timeout", "2"});
  const auto took = Clock::now() - t0;
  ASSERT_FALSE(c.timed_out) << "the harness was still running after 90 s";
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_LT(took, std::chrono::seconds(20));
  EXPECT_TRUE(c.leftovers.empty());
  const Json run = test::load_json(report)["runs"][0];
  const auto frames = frames_in(run, lib);
  ASSERT_FALSE(frames.empty()) << run.dump(1);
  size_t given_up = 0;
  for (const auto& f : frames) {
    if (f.value("reason", "").find("longer than --symbolize-timeout 2 s") == std::string::npos) continue;
    EXPECT_EQ(f["source"], "none") << f;
    EXPECT_TRUE(f["function"].is_null()) << f;
    ++given_up;
  }
  EXPECT_GT(given_up, 0u) << run.dump(1);
  EXPECT_NE(run["heap_objects"][lib].value("reason", "").find("--symbolize-timeout"), std::string::npos)
      << run["heap_objects"];
}

// Live processes whose environment holds `tag`.
std::vector<pid_t> tagged(const std::string& tag) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string env = test::slurp(e.path().string() + "/environ");
    const std::string stat = test::slurp(e.path().string() + "/stat");
    const auto close = stat.rfind(')');
    const bool zombie = close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z';
    if (!zombie && env.find(tag) != std::string::npos) out.push_back(pid_t(std::stoi(pid)));
  }
  return out;
}

// The harness's children that are the harness (the process naming frames).
bool has_naming_child(pid_t harness) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string stat = test::slurp(e.path().string() + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos || stat.find("(harness)") == std::string::npos) continue;
    if (std::atoi(stat.c_str() + close + 4) == harness) return true;
  }
  return false;
}

TEST(SymbolizeRun, SigtermWhileFramesAreNamedEndsTheHarnessWithItsReport) {
  const std::string lib = plugin_with_fifo_debug_file("fifo-sigterm");
  const std::string report = test::scratch("fifo-sigterm.json");
  const std::string tag = "MEMHARNESS_TEST_TAG=" + report;
  const pid_t pid = fork();
  if (pid == 0) {
    putenv(const_cast<char*>(tag.c_str()));
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(HARNESS_BIN, HARNESS_BIN, "--ledger", "--heap-sample", "4K", "-a", "glibc", "--runs", "1", "--quiet", "-o",
          report.c_str(), "--", MAPPED_FIFO, lib.c_str(), "kept", nullptr);
    _exit(127);
  }
  // The program ends at once; then the harness names its frames (in a child
  // of its own, where there is one): blocked on the debug file.
  for (int i = 0; i < 200 && !has_naming_child(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGTERM);
  int status = -1, code = -1;
  for (int i = 0; i < 200; ++i) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (code == -1) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  ASSERT_EQ(code, 143) << "-1: still running 10 s after SIGTERM";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto left = tagged(tag);
  EXPECT_TRUE(left.empty()) << left.size() << " processes of the harness left, the first " << left[0];
  for (pid_t p : left) kill(p, SIGKILL);
  const Json run = test::load_json(report)["runs"][0];
  const auto frames = frames_in(run, lib);
  ASSERT_FALSE(frames.empty()) << run.dump(1);
  EXPECT_NE(frames.back().value("reason", "").find("asked to stop"), std::string::npos) << frames.back();
}

}  // namespace
}  // namespace mh
