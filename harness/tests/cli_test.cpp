// What a user sees on bad input: exit code 2 and a message naming the bad
// value and the valid choices, before anything runs.
#include <gtest/gtest.h>

#include "test_util.h"

namespace mh {
namespace {

void expect_bad_input(const std::vector<std::string>& args, const std::vector<std::string>& needles) {
  auto c = test::run_harness(args);
  EXPECT_EQ(c.exit_code, 2) << c.err;
  for (const auto& n : needles) EXPECT_NE(c.err.find(n), std::string::npos) << "missing '" << n << "' in: " << c.err;
}

TEST(Cli, UnknownWorkloadListsTheValidOnes) {
  expect_bad_input({"--workload", "burst-write"}, {"'burst-write'", "burst-writefile"});
}

TEST(Cli, UnknownAllocatorListsTheValidOnes) {
  expect_bad_input({"--workload", "burst-writefile", "--smoke", "--allocator", "hoard"}, {"'hoard'", "jemalloc", "tcmalloc"});
}

TEST(Cli, UnknownWorkloadParameterListsTheParameters) {
  expect_bad_input({"--workload", "burst-writefile", "--cals", "3"}, {"--cals", "--calls", "--release-on-pool"});
}

TEST(Cli, OutOfRangeParameterNamesTheValueAndTheRange) {
  expect_bad_input({"--workload", "burst-writefile", "--calls", "0"}, {"'0'", "--calls", "between 1 and"});
  expect_bad_input({"--workload", "burst-writefile", "--size", "lots"}, {"'lots'", "--size", "1.5M"});
  expect_bad_input({"--workload", "burst-writefile", "--idle-hook", "sometimes"}, {"'sometimes'", "none, inline, handoff"});
}

TEST(Cli, HarnessOptionOutOfRange) {
  expect_bad_input({"--workload", "burst-writefile", "--runs", "0"}, {"--runs", "0"});
  expect_bad_input({"--workload", "burst-writefile", "--sample-ms", "0.5"}, {"--sample-ms"});
  expect_bad_input({"--workload", "burst-writefile", "--smaps-ms", "-5"}, {"--smaps-ms", "-5"});
}

TEST(Cli, NotASharedLibrary) {
  expect_bad_input({"--workload", "burst-writefile", "--allocator", "mine=/etc/hostname"}, {"/etc/hostname", "not a shared library"});
}

TEST(Cli, UnwritableOutput) {
  expect_bad_input({"--workload", "burst-writefile", "--smoke", "--out", "/proc/no/report.json"}, {"/proc/no"});
}

TEST(Cli, NoWorkload) { expect_bad_input({}, {"--workload"}); }

TEST(Cli, ListShowsWorkloadsAndParameters) {
  auto c = test::run_harness({"--list"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("burst-writefile"), std::string::npos);
  EXPECT_NE(c.out.find("--release-on-pool"), std::string::npos);
  EXPECT_NE(c.out.find("default 300"), std::string::npos);
}

TEST(Cli, HelpExitsZero) {
  auto c = test::run_harness({"--help"});
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_NE(c.out.find("--sample-ms"), std::string::npos);
}

}  // namespace
}  // namespace mh
