// The allocator registry: spec parsing, option mapping, errors.
#include <gtest/gtest.h>

#include <filesystem>

#include "inputs/allocators.h"

namespace mh {
namespace {

const std::string kJemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";

AllocatorContext ctx() { return default_allocator_context("/nonexistent"); }

AllocatorSpec parse_ok(const std::string& text) {
  std::string error;
  auto s = parse_allocator(text, ctx(), error);
  EXPECT_TRUE(s) << error;
  return s.value_or(AllocatorSpec{});
}

std::string parse_error(const std::string& text) {
  std::string error;
  EXPECT_FALSE(parse_allocator(text, ctx(), error));
  return error;
}

TEST(Allocators, GlibcPreloadsNothing) {
  auto s = parse_ok("glibc");
  EXPECT_EQ(s.family, "glibc");
  EXPECT_EQ(s.library, "");
  EXPECT_TRUE(s.env.empty());
}

TEST(Allocators, GlibcOptionsBecomeTunables) {
  auto s = parse_ok("glibc:trim_threshold=131072,arena_max=2");
  EXPECT_EQ(s.env.at("GLIBC_TUNABLES"), "glibc.malloc.trim_threshold=131072:glibc.malloc.arena_max=2");
}

TEST(Allocators, JemallocOptionsBecomeMallocConf) {
  auto s = parse_ok("jemalloc:background_thread=true,dirty_decay_ms=100");
  EXPECT_EQ(s.family, "jemalloc");
  EXPECT_TRUE(std::filesystem::equivalent(s.library, kJemalloc)) << s.library;
  EXPECT_EQ(s.env.at("MALLOC_CONF"), "background_thread:true,dirty_decay_ms:100");
  EXPECT_EQ(s.label, "jemalloc:background_thread=true,dirty_decay_ms=100");
}

TEST(Allocators, MimallocAndTcmallocUseTheirPrefixes) {
  EXPECT_EQ(parse_ok("mimalloc:decommit_delay=0").env.at("MIMALLOC_DECOMMIT_DELAY"), "0");
  auto t = parse_ok("tcmalloc:release_rate=10");
  EXPECT_EQ(t.env.at("TCMALLOC_RELEASE_RATE"), "10");
  EXPECT_NE(t.library.find("libtcmalloc"), std::string::npos);
}

TEST(Allocators, UnknownNameListsTheValidOnes) {
  auto e = parse_error("hoard");
  EXPECT_NE(e.find("'hoard'"), std::string::npos) << e;
  EXPECT_NE(e.find("jemalloc"), std::string::npos) << e;
  EXPECT_NE(e.find("NAME=/path/to/lib.so"), std::string::npos) << e;
}

TEST(Allocators, ScavWithoutABuildIsNotAvailable) {
  auto e = parse_error("scav");
  EXPECT_NE(e.find("libscav.so"), std::string::npos) << e;
}

TEST(Allocators, PathThatIsNotASharedLibraryIsRejected) {
  auto e = parse_error("mine=/etc/hostname");
  EXPECT_NE(e.find("/etc/hostname"), std::string::npos) << e;
  EXPECT_NE(e.find("not a shared library"), std::string::npos) << e;
  EXPECT_NE(parse_error("mine=/no/such/lib.so").find("cannot open"), std::string::npos);
  EXPECT_NE(parse_error("mine=/bin/true").find("not a 64-bit shared library"), std::string::npos);
}

TEST(Allocators, CustomPathTakesOptionsAsEnvironment) {
  auto s = parse_ok("mine=" + kJemalloc + ":MALLOC_CONF=narenas:1");
  EXPECT_EQ(s.family, "custom");
  EXPECT_EQ(s.library, kJemalloc);
  EXPECT_EQ(s.env.at("MALLOC_CONF"), "narenas:1");
}

TEST(Allocators, BuiltinNameWithAPathKeepsTheFamily) {
  auto s = parse_ok("jemalloc=" + kJemalloc + ":narenas=1");
  EXPECT_EQ(s.family, "jemalloc");
  EXPECT_EQ(s.env.at("MALLOC_CONF"), "narenas:1");
}

TEST(Allocators, BadOptionSyntaxNamesTheOption) {
  auto e = parse_error("jemalloc:background_thread");
  EXPECT_NE(e.find("background_thread"), std::string::npos) << e;
  EXPECT_NE(e.find("KEY=VALUE"), std::string::npos) << e;
}

TEST(Allocators, AvailableBuiltinsSayWhyOthersAreMissing) {
  std::vector<std::string> missing;
  auto all = available_builtins(ctx(), &missing);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().family, "glibc");
  // snmalloc has no system package: only a pin or a path provides it, so it is
  // neither run by default nor named as missing on every run.
  EXPECT_EQ(all.size() + missing.size() + 1, builtin_allocator_names().size());
  for (const auto& a : all) EXPECT_NE(a.family, "snmalloc");
  for (const auto& m : missing) EXPECT_EQ(m.find("snmalloc"), std::string::npos) << m;
  std::string error;
  EXPECT_FALSE(parse_allocator("snmalloc", ctx(), error));
  EXPECT_NE(error.find("no system package provides it; build it from a pin (snmalloc@REV"), std::string::npos)
      << error;
}

}  // namespace
}  // namespace mh
