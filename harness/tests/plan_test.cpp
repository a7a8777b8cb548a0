// Run order, suites and shards.
#include <gtest/gtest.h>

#include "inputs/plan.h"
#include "test_util.h"

namespace mh {
namespace {

std::string order(const std::vector<PlannedRun>& plan) {
  std::string s;
  for (const auto& p : plan) s += std::to_string(p.job) + char('A' + p.arm) + std::to_string(p.repetition) + " ";
  return s;
}

TEST(Plan, InterleavesRoundByRound) {
  EXPECT_EQ(order(interleave(1, 3, 2, std::nullopt)), "0A1 0B1 0C1 0A2 0B2 0C2 ");
  EXPECT_EQ(order(interleave(2, 2, 1, std::nullopt)), "0A1 0B1 1A1 1B1 ");
}

TEST(Plan, ShuffleIsPerRoundAndReproducible) {
  auto a = interleave(1, 3, 20, 7), b = interleave(1, 3, 20, 7), c = interleave(1, 3, 20, 8);
  EXPECT_EQ(order(a), order(b));
  EXPECT_NE(order(a), order(c));
  // Every round still has each arm once.
  for (size_t r = 0; r < 20; ++r) {
    int seen = 0;
    for (size_t i = 0; i < 3; ++i) seen |= 1 << a[r * 3 + i].arm;
    EXPECT_EQ(seen, 7);
  }
  EXPECT_NE(order(a), order(interleave(1, 3, 20, std::nullopt)));
}

TEST(Plan, AProgramIsNotRunUnderAFamilyItCannotRunUnder) {
  std::string error;
  auto server = program_from_json(Json{{"command", {"true"}}, {"name", "server"},
                                       {"not_under", {{"glibc", "links its own allocator"}}}},
                                  error);
  ASSERT_TRUE(server) << error;
  std::vector<Job> jobs(2);
  jobs[0].workload.name = "micro";
  jobs[1].workload.name = "server";
  jobs[1].program = *server;
  std::vector<Arm> arms(2);
  arms[0].allocator.family = arms[0].allocator.label = "glibc";
  arms[1].allocator.family = "jemalloc";
  arms[1].allocator.label = "jemalloc:narenas=1";
  auto plan = interleave(2, 2, 2, std::nullopt);
  const Json left = leave_out_unsupported(jobs, arms, plan);
  EXPECT_EQ(order(plan), "0A1 0B1 1B1 0A2 0B2 1B2 ");
  EXPECT_EQ(left, Json::parse(R"([{"workload": "server", "allocator": "glibc", "why": "links its own allocator"}])"));

  // The families are checked.
  EXPECT_FALSE(program_from_json(Json{{"command", {"true"}}, {"not_under", {{"glibcc", "x"}}}}, error));
  EXPECT_NE(error.find("'glibcc'"), std::string::npos) << error;
  EXPECT_NE(error.find("jemalloc"), std::string::npos) << error;
}

TEST(Plan, Shards) {
  std::string error;
  auto s = parse_shard("2/3", error);
  ASSERT_TRUE(s);
  EXPECT_EQ(select_shard(std::vector<int>{0, 1, 2, 3, 4, 5, 6}, *s), (std::vector<int>{1, 4}));
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "1/2x"}) {
    EXPECT_FALSE(parse_shard(bad, error)) << bad;
    EXPECT_NE(error.find(bad), std::string::npos);
  }
}

TEST(Plan, SuitesFromTheShippedFile) {
  std::string error;
  const std::string path = std::string(MEMHARNESS_SOURCE_DIR_FOR_TESTS) + "/workloads/suites.json";
  auto quick = load_suite(path, "quick", error);
  ASSERT_TRUE(quick) << error;
  ASSERT_FALSE(quick->empty());
  for (const auto& e : *quick) EXPECT_NE(std::find(e.args.begin(), e.args.end(), "--smoke"), e.args.end()) << e.workload;
  EXPECT_FALSE(load_suite(path, "slow", error));
  EXPECT_NE(error.find("'slow'"), std::string::npos);
  EXPECT_NE(error.find("quick"), std::string::npos);
}

}  // namespace
}  // namespace mh
