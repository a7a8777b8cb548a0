// Pins built from repositories the test makes, and bisect over a history of
// scav that the test writes: one commit sets a long purge delay by default,
// one does not build. The bisect is interrupted once and resumed. A minute or
// two on 2 cores (scav is built five or six times), so CTest runs this binary
// as one test.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "test_util.h"

namespace mh {
namespace {

namespace fs = std::filesystem;

// A bisect builds scav at several commits and runs each: about a minute on a quiet
// 2-core machine, several while other tests load both cores (the resumed bisect below
// was killed at run_harness's default 60 s in a full suite run beside a fuzzer).
constexpr double kBisectTimeout = 300;

std::string git(const std::string& repo, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/git", "-C", repo, "-c", "user.name=memharness test", "-c",
                                   "user.email=test@memharness.invalid"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto c = run_capture(argv);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  return c.out.substr(0, c.out.find('\n'));
}

std::string commit_all(const std::string& repo, const std::string& message) {
  git(repo, {"add", "-A"});
  git(repo, {"commit", "--quiet", "-m", message});
  return git(repo, {"rev-parse", "HEAD"});
}

void replace_in(const fs::path& file, const std::string& from, const std::string& to) {
  std::string text = test::slurp(file.string());
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << file;
  text.replace(at, from.size(), to);
  std::ofstream(file) << text;
}

// A minimal allocator over glibc's: what it adds differs between commits.
const char* kTinyAllocator = R"(#include <stddef.h>
#include <string.h>
extern void* __libc_malloc(size_t); extern void __libc_free(void*);
extern void* __libc_calloc(size_t, size_t); extern void* __libc_realloc(void*, size_t);
void* malloc(size_t n) { return __libc_malloc(n); }
void free(void* p) { __libc_free(p); }
void* calloc(size_t a, size_t b) { return __libc_calloc(a, b); }
void* realloc(void* p, size_t n) { return __libc_realloc(p, n); }
)";

class Pins : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = test::scratch("pins");
    fs::remove_all(root_);
    // tiny: two commits; the second holds 32 MiB from its start.
    tiny_ = root_ + "/tiny";
    fs::create_directories(tiny_);
    git(tiny_, {"init", "--quiet"});
    std::ofstream(tiny_ + "/tiny.c") << kTinyAllocator;
    tiny1_ = commit_all(tiny_, "A tiny allocator");
    std::ofstream(tiny_ + "/tiny.c", std::ios::app)
        << "__attribute__((constructor)) static void hold(void) { static char* p; p = __libc_malloc(32 << 20); "
           "memset(p, 1, 32 << 20); }\n";
    tiny2_ = commit_all(tiny_, "Hold 32 MiB from the start");
    std::ofstream(tiny_ + "/tiny.c", std::ios::app) << "this is not C\n";
    broken_ = commit_all(tiny_, "Break the build");

    // scav: ten commits after the good one; the fifth does not build (it is
    // the first the walk tries), the eighth sets a purge delay of 3 s by default.
    scav_ = root_ + "/scav";
    fs::create_directories(scav_);
    git(scav_, {"init", "--quiet"});
    fs::copy(std::string(MEMHARNESS_SOURCE_DIR_FOR_TESTS) + "/allocators/scav", scav_ + "/scav",
             fs::copy_options::recursive);
    std::ofstream(scav_ + "/history.txt") << "good\n";
    good_ = commit_all(scav_, "scav as it is");
    const fs::path options = fs::path(scav_) / "scav/src/options.cpp";
    for (int i = 1; i <= 10; ++i) {
      std::ofstream(scav_ + "/history.txt", std::ios::app) << "commit " << i << "\n";
      if (i == 5) std::ofstream(fs::path(scav_) / "scav/src/stats.cpp", std::ios::app) << "#error broken on purpose\n";
      if (i == 6) replace_in(fs::path(scav_) / "scav/src/stats.cpp", "#error broken on purpose\n", "");
      if (i == 8) replace_in(options, "{\"purge_delay_ms\",    100,", "{\"purge_delay_ms\",    3000,");
      commits_.push_back(commit_all(scav_, i == 8 ? "Purge three seconds after a free" : "Commit " + std::to_string(i)));
    }

    const Json build_cc = Json::array({Json::array({"cc", "-shared", "-fPIC", "-O1", "-o", "{build}/libtiny.so",
                                                    "{source}/tiny.c"})});
    const Json build_scav = Json::array(
        {Json::array({"cmake", "-S", "{source}/scav", "-B", "{build}", "-DCMAKE_BUILD_TYPE=Release",
                      "-DBUILD_TESTING=OFF", "-DMEMHARNESS_BUILD_LIBDIR={build}/lib"}),
         Json::array({"cmake", "--build", "{build}", "--target", "scav", "-j", "{jobs}"})});
    pins_ = root_ + "/pins.json";
    std::ofstream(pins_) << Json{{"pins",
                                  {{"tiny", {{"repository", tiny_}, {"build", build_cc}, {"library", "libtiny.so"},
                                             {"family", "none"}}},
                                   {"scavtest", {{"repository", scav_}, {"build", build_scav},
                                                 {"library", "lib/libscav.so"}, {"family", "scav"}}}}}}
                                .dump(2);
    setenv("MEMHARNESS_PINS", pins_.c_str(), 1);
    setenv("MEMHARNESS_PIN_CACHE", (root_ + "/cache").c_str(), 1);
  }
  static void TearDownTestSuite() {
    unsetenv("MEMHARNESS_PINS");
    unsetenv("MEMHARNESS_PIN_CACHE");
    fs::remove_all(root_);
  }
  static inline std::string root_, tiny_, tiny1_, tiny2_, broken_, scav_, good_, pins_;
  static inline std::vector<std::string> commits_;
};

// One repository at two commits: two libraries in the cache, each run under
// its own, and the second one's 32 MiB in the peak.
TEST_F(Pins, ARepositoryBuildsAtTwoCommits) {
  const std::string out = test::scratch("tiny.json");
  auto c = test::run_harness({"-w", "idle-return", "--smoke", "-a", "tiny@" + tiny1_.substr(0, 8), "-a",
                              "tiny@" + tiny2_, "-n", "1", "-q", "-o", out});
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  Json runs = test::load_json(out)["runs"];
  ASSERT_EQ(runs.size(), 2u);
  const std::string lib1 = runs[0]["allocator"]["library"], lib2 = runs[1]["allocator"]["library"];
  EXPECT_NE(lib1, lib2);
  EXPECT_NE(lib1.find(root_ + "/cache/tiny-" + tiny1_.substr(0, 12) + "-"), std::string::npos) << lib1;
  EXPECT_NE(lib2.find(root_ + "/cache/tiny-" + tiny2_.substr(0, 12) + "-"), std::string::npos) << lib2;
  for (const auto& r : runs) {
    EXPECT_EQ(r["status"], "ok") << r["exit"].dump();
    EXPECT_EQ(r["allocator"]["family"], "custom");
    EXPECT_EQ(r["allocator"]["served_by"], r["allocator"]["library"]);
  }
  const double peak1 = runs[0]["metrics"]["peak_rss_kb"], peak2 = runs[1]["metrics"]["peak_rss_kb"];
  EXPECT_GT(peak2 - peak1, 30 * 1024);
  // A second use takes the library from the cache.
  c = test::run_harness({"-w", "idle-return", "--smoke", "-a", "tiny@" + tiny1_, "-n", "1", "-q", "-o", out});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.err.find("building tiny"), std::string::npos) << c.err;
}

// The log's path in "the log is PATH, ending:\n  ...": up to the comma or the line's end.
std::string log_path(const std::string& from) { return from.substr(0, std::min(from.find(", ending:"), from.find('\n'))); }

TEST_F(Pins, AFailedBuildIsExitTwoNamingItsLog) {
  auto c = test::run_harness({"-w", "idle-return", "--smoke", "-a", "tiny@" + broken_, "-n", "1", "-q"});
  EXPECT_EQ(c.exit_code, 2) << c.out << c.err;
  const auto at = c.err.find("the log is ");
  ASSERT_NE(at, std::string::npos) << c.err;
  const std::string log = log_path(c.err.substr(at + 11));
  EXPECT_TRUE(fs::exists(log)) << log;
  EXPECT_NE(test::slurp(log).find("this is not C"), std::string::npos) << test::slurp(log);
  EXPECT_NE(c.err.find("exited with status"), std::string::npos) << c.err;
  EXPECT_EQ(c.out.find("runs ok"), std::string::npos) << "nothing ran: " << c.out;
}

TEST_F(Pins, AnUnknownPinOrRevisionIsExitTwoNamingIt) {
  auto c = test::run_harness({"-w", "idle-return", "--smoke", "-a", "nosuch@HEAD", "-q"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("'nosuch' is not a pin with a repository"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("scavtest, tiny"), std::string::npos) << c.err;
  c = test::run_harness({"-w", "idle-return", "--smoke", "-a", "tiny@no-such-rev", "-q"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("unknown revision 'no-such-rev' in " + tiny_), std::string::npos) << c.err;
}

// good and bad that do not differ: nothing to bisect (exit 2), said with the table.
TEST_F(Pins, BisectRefusesRevisionsThatDoNotDiffer) {
  auto c = test::run_harness({"bisect", "--pin", "scavtest", "--good", good_, "--bad", commits_[2], "--metric",
                              "final_rss_kb", "-n", "3", "--seed", "7", "-q", "--state",
                              test::scratch("bisect-same/state.json"), "-w", "idle-return", "--smoke"},
                             kBisectTimeout);
  EXPECT_EQ(c.exit_code, 2) << c.out << c.err;
  EXPECT_NE(c.err.find("do not differ"), std::string::npos) << c.err;
}

// The bisect is stopped (SIGINT) once its first comparison is in the state
// file, then run again: it goes on from there and names commit 8, passing
// over commit 5, which does not build.
TEST_F(Pins, BisectFindsTheCommitSkipsTheBrokenOneAndResumes) {
  const std::string state = test::scratch("bisect/state.json");
  const std::vector<std::string> args = {"bisect", "--pin", "scavtest", "--good", good_, "--bad", commits_.back(),
                                         "--metric", "final_rss_kb", "-n", "3", "--seed", "11", "-q", "--state",
                                         state, "-w", "idle-return", "--smoke"};
  std::vector<std::string> argv = {HARNESS_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  // Wait for the first step after the check to start (its runs report), then stop.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  bool stepped = false;
  while (std::chrono::steady_clock::now() < deadline && !stepped) {
    std::error_code ec;
    for (auto it = fs::directory_iterator(fs::path(state).parent_path(), ec); !ec && it != fs::directory_iterator();
         it.increment(ec))
      stepped = stepped || it->path().filename().string().rfind("step-", 0) == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid, stepped ? SIGINT : SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(stepped) << "no step within 240 s";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  Json stopped = test::load_json(state);
  ASSERT_GE(stopped["steps"].size(), 1u);  // the check of good against bad is kept
  EXPECT_EQ(stopped["steps"][0]["outcome"], "bad");

  auto c = test::run_harness(args, kBisectTimeout);
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_NE(c.err.find("resuming " + state), std::string::npos) << c.err;
  EXPECT_NE(c.out.find("first bad commit: " + commits_[7] + " Purge three seconds after a free"), std::string::npos)
      << c.out << c.err;
  EXPECT_NE(c.out.find("final_rss_kb"), std::string::npos) << "its comparison table: " << c.out;
  Json done = test::load_json(state);
  EXPECT_EQ(done["first_bad"], commits_[7]);
  EXPECT_EQ(done["could_also_be"].size(), 0u);
  bool skipped_five = false;
  for (const auto& s : done["steps"]) {
    if (s["commit"] == commits_[4]) {
      skipped_five = s["outcome"] == "skip";
      const std::string note = s["note"];
      const auto at = note.find("the log is ");
      ASSERT_NE(at, std::string::npos) << note;
      EXPECT_NE(test::slurp(log_path(note.substr(at + 11))).find("broken on purpose"), std::string::npos) << note;
    }
    const bool after_the_change = s["commit"] == commits_[7] || s["commit"] == commits_[8] || s["commit"] == commits_[9];
    if (s["outcome"] != "skip") {
      EXPECT_EQ(s["outcome"] == "bad", after_the_change) << s.dump();
    }
  }
  EXPECT_TRUE(skipped_five) << done["steps"].dump();
}

}  // namespace
}  // namespace mh
