// Pins files, NAME@REV and the pure parts of sweep, and the pin cache's rules
// on a build that only copies a file.
#include "inputs/pins.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "commands/sweep.h"
#include "test_util.h"

namespace mh {
namespace {

TEST(Pins, RevisionsSplitIntoNameRevisionAndOptions) {
  auto p = parse_pin_revision("mimalloc-fork@v2.1.7:purge_delay=10");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, "mimalloc-fork");
  EXPECT_EQ(p->rev, "v2.1.7");
  EXPECT_EQ(p->options, "purge_delay=10");
  EXPECT_EQ(parse_pin_revision("scav@HEAD~3")->rev, "HEAD~3");
  EXPECT_FALSE(parse_pin_revision("scav"));
  EXPECT_FALSE(parse_pin_revision("scav@"));
  EXPECT_FALSE(parse_pin_revision("mine=/opt/lib@2/libx.so"));  // a path, not a revision
}

TEST(Pins, AFileNamesSpecsAndRepositories) {
  const std::string path = test::scratch("pins-ok.json");
  std::ofstream(path) << R"({"pins": {"bg": "jemalloc:background_thread=true",
    "fork": {"repository": "/src/fork", "build": [["make", "-C", "{source}"]], "library": "libx.so",
             "family": "none"}}})";
  std::string error;
  auto f = load_pins(path, error);
  ASSERT_TRUE(f) << error;
  EXPECT_EQ(f->specs.at("bg"), "jemalloc:background_thread=true");
  ASSERT_EQ(f->repos.count("fork"), 1u);
  EXPECT_EQ(f->repos.at("fork").build.at(0), (std::vector<std::string>{"make", "-C", "{source}"}));
  EXPECT_EQ(f->repos.at("fork").family, "none");
}

TEST(Pins, ABadEntryIsNamed) {
  const std::string path = test::scratch("pins-bad.json");
  const std::pair<const char*, const char*> cases[] = {
      {R"({"pins": {"x": {"repository": "/r", "build": [["make"]], "library": "l.so", "family": "dlmalloc"}}})",
       "unknown family 'dlmalloc'; valid: jemalloc, mimalloc, tcmalloc, scav, snmalloc, none"},
      {R"({"pins": {"x": {"repository": "/r", "build": [], "library": "l.so", "family": "none"}}})",
       "pin 'x': \"build\" must be a list of commands"},
      {R"({"pins": {"x": {"repository": "/r", "build": [["make", 3]], "library": "l.so", "family": "none"}}})",
       "is not a non-empty list of strings"},
      {R"({"pins": {"x": {"build": [["make"]], "library": "l.so", "family": "none"}}})",
       "pin 'x': \"repository\" must be a non-empty string"},
      {R"({"pins": {"x": 3}})", "pin 'x' must be an allocator spec (a string) or a repository (an object)"},
  };
  for (const auto& [text, expected] : cases) {
    std::ofstream(path) << text;
    std::string error;
    EXPECT_FALSE(load_pins(path, error)) << text;
    EXPECT_NE(error.find(expected), std::string::npos) << error;
    EXPECT_NE(error.find(path), std::string::npos) << error;
  }
}

TEST(Sweep, GridsExpandOneOrTwoOptionsKeepingTheFixedOnes) {
  std::string error;
  auto one = expand_grid("scav:purge_delay_ms=10|100|1000", error);
  ASSERT_TRUE(one) << error;
  EXPECT_EQ(*one, (std::vector<std::string>{"scav:purge_delay_ms=10", "scav:purge_delay_ms=100",
                                            "scav:purge_delay_ms=1000"}));
  auto two = expand_grid("jemalloc:background_thread=true|false,narenas=1,dirty_decay_ms=0|100", error);
  ASSERT_TRUE(two) << error;
  ASSERT_EQ(two->size(), 4u);
  EXPECT_EQ(two->front(), "jemalloc:background_thread=true,narenas=1,dirty_decay_ms=0");
  EXPECT_EQ(two->back(), "jemalloc:background_thread=false,narenas=1,dirty_decay_ms=100");
  EXPECT_FALSE(expand_grid("scav", error));
  EXPECT_NE(error.find("is not a grid"), std::string::npos);
  EXPECT_FALSE(expand_grid("scav:purge_delay_ms=10", error));
  EXPECT_NE(error.find("varies 0 options"), std::string::npos);
  EXPECT_FALSE(expand_grid("jemalloc:a=1|2,b=1|2,c=1|2", error));
  EXPECT_NE(error.find("varies 3 options"), std::string::npos);
  EXPECT_FALSE(expand_grid("scav:purge_delay_ms=10||100", error));
  EXPECT_NE(error.find("an empty value of purge_delay_ms"), std::string::npos);
}

TEST(Sweep, TheParetoFrontIsThePointsNoOtherBeatsOnBoth) {
  // (area, faults), both lower is better.
  const std::vector<std::pair<double, double>> points = {{10, 500}, {20, 100}, {15, 600}, {30, 100}, {10, 500}};
  EXPECT_EQ(pareto_front(points, false, false), (std::vector<bool>{true, true, false, false, true}));
  // Faults higher is better (say, requests per second): (30, 100) is beaten by nothing on both now.
  EXPECT_EQ(pareto_front({{10, 500}, {15, 600}, {30, 100}}, false, true), (std::vector<bool>{true, true, false}));
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

namespace fs = std::filesystem;

// A one-commit repository whose "build" copies lib.so: the pin cache's rules
// without a compiler.
struct PinCache : ::testing::Test {
  std::string root, repo, cache;
  RepoPin pin;
  void SetUp() override {
    root = test::scratch(std::string("pin-cache-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    repo = root + "/repo";
    cache = root + "/cache";
    fs::create_directories(repo);
    std::ofstream(repo + "/lib.so") << "the real library\n";
    for (std::vector<std::string> git : {std::vector<std::string>{"init", "-q"},
                                         {"add", "lib.so"},
                                         {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"}}) {
      git.insert(git.begin(), {"/usr/bin/git", "-C", repo});
      ASSERT_EQ(run_capture(git).exit_code, 0);
    }
    pin.name = "copy";
    pin.repository = repo;
    pin.build = {{"/bin/cp", "{source}/lib.so", "{build}/lib.so"}};
    pin.library = "lib.so";
    pin.family = "none";
  }
  BuiltPin build() {
    std::string error;
    auto b = build_pin(pin, "HEAD", PinPaths{"", cache}, error);
    EXPECT_TRUE(b) << error;
    return b.value_or(BuiltPin{});
  }
};

TEST_F(PinCache, AnEntryIsReusedOnlyWhileNoOneElseCouldHaveWrittenIt) {
  const BuiltPin first = build();
  EXPECT_EQ(first.cache, "built");
  EXPECT_EQ(build().cache, "reused");

  // A folder others may write: rebuilt, and the new entry is private again.
  fs::permissions(first.dir, fs::perms::others_write, fs::perm_options::add);
  const BuiltPin again = build();
  EXPECT_EQ(again.cache.rfind("rebuilt: ", 0), 0u) << again.cache;
  EXPECT_NE(again.cache.find("may be written by others"), std::string::npos) << again.cache;
  EXPECT_EQ(fs::status(again.dir).permissions() & fs::perms::others_write, fs::perms::none);
  EXPECT_EQ(build().cache, "reused");
}

TEST_F(PinCache, APlantedLibraryWithTheStampKeptIsNotUsed) {
  const BuiltPin first = build();
  std::ofstream(first.library, std::ios::trunc) << "a library with a constructor of someone else's\n";
  const BuiltPin again = build();
  EXPECT_NE(again.cache.find("sha256 does not match"), std::string::npos) << again.cache;
  EXPECT_EQ(test::slurp(again.library), "the real library\n");
}

TEST_F(PinCache, AnEntryOfAnotherUserIsNotUsed) {
  if (geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  const BuiltPin first = build();
  ASSERT_EQ(chown(first.library.c_str(), 4242, 4242), 0);
  const BuiltPin again = build();
  EXPECT_NE(again.cache.find("belongs to user 4242"), std::string::npos) << again.cache;
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

namespace fs = std::filesystem;

// MEMHARNESS_PIN_SOURCES: which pins a key points where.
TEST(PinSources, AKeyIsAPinOrItsRepositoryAndAPinsOwnNameWins) {
  const std::string local = test::scratch("pin-sources-local");
  fs::create_directories(local);
  PinsFile f;
  for (const char* name : {"snmalloc", "snmalloc-checks", "mimalloc3"})
    f.repos[name] = RepoPin{name, std::string("https://github.com/microsoft/") + (name[0] == 's' ? "snmalloc" : "mimalloc"),
                            {{"true"}}, "lib.so", "none"};
  std::string error;
  auto s = parse_pin_sources("https://github.com/microsoft/snmalloc=" + local + ",snmalloc-checks=https://mirror/x.git",
                             error);
  ASSERT_TRUE(s) << error;
  ASSERT_TRUE(apply_pin_sources(f, *s, error)) << error;
  EXPECT_EQ(f.repos["snmalloc"].repository, local);
  EXPECT_EQ(f.repos["snmalloc-checks"].repository, "https://mirror/x.git");
  EXPECT_EQ(f.repos["mimalloc3"].repository, "https://github.com/microsoft/mimalloc");

  s = parse_pin_sources("hoard=" + local, error);
  ASSERT_TRUE(s) << error;
  EXPECT_FALSE(apply_pin_sources(f, *s, error));
  EXPECT_NE(error.find("'hoard' is neither a pin"), std::string::npos) << error;
  EXPECT_NE(error.find("mimalloc3, snmalloc, snmalloc-checks"), std::string::npos) << error;

  EXPECT_FALSE(parse_pin_sources("mimalloc3=" + local + "/not-there.bundle", error));
  EXPECT_NE(error.find("not-there.bundle does not exist"), std::string::npos) << error;
  EXPECT_FALSE(parse_pin_sources("mimalloc3", error));
  EXPECT_NE(error.find("expected PIN=SOURCE"), std::string::npos) << error;
}

// A pin whose repository cannot be reached builds from a local clone or a
// git bundle of it, and a failed build shows the end of its log.
struct PinSourceBuild : ::testing::Test {
  std::string root, repo, cache;
  RepoPin pin;
  void git(std::vector<std::string> args) {
    args.insert(args.begin(), {"/usr/bin/git", "-C", repo});
    auto r = run_capture(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void SetUp() override {
    root = test::scratch(std::string("pin-source-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    repo = root + "/repo";
    cache = root + "/cache";
    fs::create_directories(repo);
    std::ofstream(repo + "/lib.so") << "the library\n";
    git({"init", "-q"});
    git({"add", "lib.so"});
    git({"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"});
    git({"tag", "v1"});
    pin = RepoPin{"far", "https://unreachable.invalid/far.git", {{"/bin/cp", "{source}/lib.so", "{build}/lib.so"}},
                  "lib.so", "none"};
  }
  std::optional<BuiltPin> build(const std::string& sources, std::string& error) {
    PinsFile f;
    f.repos[pin.name] = pin;
    if (!sources.empty()) {
      auto s = parse_pin_sources(sources, error);
      if (!s || !apply_pin_sources(f, *s, error)) return std::nullopt;
    }
    return build_pin(f.repos[pin.name], "v1", PinPaths{"", cache}, error);
  }
};

TEST_F(PinSourceBuild, AnUnreachableRepositoryNamesTheOverride) {
  std::string error;
  EXPECT_FALSE(build("", error));
  EXPECT_NE(error.find("cannot clone https://unreachable.invalid/far.git"), std::string::npos) << error;
  EXPECT_NE(error.find("MEMHARNESS_PIN_SOURCES=far="), std::string::npos) << error;
}

TEST_F(PinSourceBuild, ALocalCloneOrABundleIsBuiltInstead) {
  std::string error;
  auto from_clone = build("far=" + repo, error);
  ASSERT_TRUE(from_clone) << error;
  EXPECT_EQ(from_clone->cache, "built");
  EXPECT_EQ(test::slurp(from_clone->library), "the library\n");

  const std::string bundle = root + "/far.bundle";
  git({"bundle", "create", "-q", bundle, "--all"});
  fs::remove_all(cache);
  auto from_bundle = build("https://unreachable.invalid/far.git=" + bundle, error);
  ASSERT_TRUE(from_bundle) << error;
  EXPECT_EQ(from_bundle->cache, "built");
  EXPECT_EQ(from_bundle->commit, from_clone->commit);
  EXPECT_EQ(test::slurp(from_bundle->library), "the library\n");
  auto again = build("far=" + bundle, error);
  ASSERT_TRUE(again) << error;
  EXPECT_EQ(again->cache, "reused");
}

TEST_F(PinSourceBuild, AFailedBuildShowsTheEndOfItsLog) {
  pin.build = {{"/bin/sh", "-c", "for i in $(seq 1 40); do echo line $i; done; echo 'lib.c:3: error: no' >&2; exit 3"}};
  std::string error;
  EXPECT_FALSE(build("far=" + repo, error));
  EXPECT_NE(error.find("exited with status 3"), std::string::npos) << error;
  EXPECT_NE(error.find("build.log, ending:\n"), std::string::npos) << error;
  EXPECT_NE(error.find("  lib.c:3: error: no"), std::string::npos) << error;
  EXPECT_NE(error.find("  line 40"), std::string::npos) << error;
  EXPECT_EQ(error.find("line 2\n"), std::string::npos) << "only the log's last lines: " << error;
}

}  // namespace
}  // namespace mh
