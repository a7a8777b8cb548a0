// mimalloc3 from allocators/pins.json built from a git bundle of mimalloc
// (MEMHARNESS_PIN_SOURCES) into a scratch pin cache, run at smoke size, then
// taken from the cache. The bundle is found as shared/allocator-sources/ in a
// folder above the source tree, or in $MEMHARNESS_ALLOCATOR_SOURCES. About
// 15-40 s on 2 cores (mostly compiling mimalloc), so CTest runs it on its own.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>

#include "test_util.h"

namespace mh {
namespace {

namespace fs = std::filesystem;

std::string find_bundle(const std::string& name) {
  if (const char* dir = std::getenv("MEMHARNESS_ALLOCATOR_SOURCES"); dir && *dir) return std::string(dir) + "/" + name;
  for (fs::path p = fs::absolute(MEMHARNESS_SOURCE_DIR_FOR_TESTS); p.has_relative_path(); p = p.parent_path())
    if (fs::exists(p / "shared" / "allocator-sources" / name)) return (p / "shared" / "allocator-sources" / name).string();
  return "";
}

TEST(PinBundle, Mimalloc3BuildsFromTheBundleRunsVerifiedAndIsThenReused) {
  const std::string bundle = find_bundle("mimalloc.bundle");
  if (bundle.empty() || !fs::exists(bundle))
    GTEST_SKIP() << "no mimalloc.bundle in a shared/allocator-sources/ above " << MEMHARNESS_SOURCE_DIR_FOR_TESTS
                 << " (set MEMHARNESS_ALLOCATOR_SOURCES to its folder)";
  const std::string cache = test::scratch("pin-bundle-cache");
  fs::remove_all(cache);
  setenv("MEMHARNESS_PIN_CACHE", cache.c_str(), 1);
  setenv("MEMHARNESS_PIN_SOURCES", ("mimalloc3=" + bundle).c_str(), 1);
  const std::string out = test::scratch("pin-bundle.json");
  const std::vector<std::string> run = {"-a", "mimalloc3@v3.4.3", "-w", "micro", "--smoke", "--runs", "1", "-o", out};

  const auto start = std::chrono::steady_clock::now();
  auto first = test::run_harness(run, 600);
  const double first_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_NE(first.err.find("cloning " + bundle + " for pin mimalloc3"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("built mimalloc3 at "), std::string::npos) << first.err;
  const Json a = test::load_json(out)["runs"][0]["allocator"];
  EXPECT_EQ(a["name"], "mimalloc3@v3.4.3");
  EXPECT_EQ(a["family"], "mimalloc");
  EXPECT_EQ(a["identified"], "mimalloc");
  EXPECT_EQ(a["version"], "3.4.3");
  EXPECT_TRUE(a["verified"].get<bool>()) << a.dump();
  EXPECT_EQ(a["library"].get<std::string>().rfind(cache + "/mimalloc3-", 0), 0u) << a.dump();
  EXPECT_TRUE(a["library"].get<std::string>().ends_with("/build/libmimalloc.so")) << a.dump();

  // The second run takes the cached build: nothing cloned or built.
  auto second = test::run_harness(run, 120);
  unsetenv("MEMHARNESS_PIN_CACHE");
  unsetenv("MEMHARNESS_PIN_SOURCES");
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(second.err.find("building"), std::string::npos) << second.err;
  EXPECT_EQ(second.err.find("cloning"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("harness: mimalloc3 at "), std::string::npos) << second.err;
  EXPECT_NE(second.err.find(": the cached build " + cache + "/mimalloc3-"), std::string::npos) << second.err;
  EXPECT_EQ(test::load_json(out)["runs"][0]["allocator"]["library"], a["library"]);
  RecordProperty("first_run_s", std::to_string(first_s));
}

}  // namespace
}  // namespace mh
