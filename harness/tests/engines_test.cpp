// --shard auto under each engine's variables (inputs/engines.h): 0- and
// 1-based indices, Slurm's arrays, counts missing and engines that disagree.
#include "inputs/engines.h"

#include <gtest/gtest.h>

#include <map>

namespace mh {
namespace {

using Vars = std::map<std::string, std::string>;

EnvReader env_of(const Vars& vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

struct Case {
  const char* engine;
  Vars vars;
  int index, count;  // the 1-based shard expected
};

TEST(Engines, EachEngineGivesItsShard) {
  const std::vector<Case> cases = {
      {"kubernetes", {{"JOB_COMPLETION_INDEX", "0"}, {kShardCountVariable, "4"}}, 1, 4},
      {"kubernetes", {{"JOB_COMPLETION_INDEX", "3"}, {kShardCountVariable, "4"}}, 4, 4},
      {"slurm", {{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_MAX", "2"},
                 {"SLURM_ARRAY_TASK_STEP", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}, 1, 3},
      {"slurm", {{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_MAX", "3"},
                 {"SLURM_ARRAY_TASK_STEP", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}, 3, 3},
      // --array=10-40:10: IDs 10, 20, 30, 40.
      {"slurm", {{"SLURM_ARRAY_TASK_ID", "30"}, {"SLURM_ARRAY_TASK_MIN", "10"}, {"SLURM_ARRAY_TASK_MAX", "40"},
                 {"SLURM_ARRAY_TASK_STEP", "10"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}, 3, 4},
      {"gitlab", {{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "2"}}, 1, 2},
      {"gitlab", {{"CI_NODE_INDEX", "2"}, {"CI_NODE_TOTAL", "2"}}, 2, 2},
      {"buildkite", {{"BUILDKITE_PARALLEL_JOB", "0"}, {"BUILDKITE_PARALLEL_JOB_COUNT", "5"}}, 1, 5},
      {"buildkite", {{"BUILDKITE_PARALLEL_JOB", "4"}, {"BUILDKITE_PARALLEL_JOB_COUNT", "5"}}, 5, 5},
      {"circleci", {{"CIRCLE_NODE_INDEX", "1"}, {"CIRCLE_NODE_TOTAL", "3"}}, 2, 3},
      {"bazel", {{"TEST_SHARD_INDEX", "0"}, {"TEST_TOTAL_SHARDS", "2"}}, 1, 2},
      {"googletest", {{"GTEST_SHARD_INDEX", "6"}, {"GTEST_TOTAL_SHARDS", "7"}}, 7, 7},
  };
  for (const auto& c : cases) {
    std::string error;
    auto s = shard_from_engines("auto", env_of(c.vars), error);
    ASSERT_TRUE(s) << c.engine << ": " << error;
    EXPECT_EQ(s->engine, c.engine);
    EXPECT_EQ(s->shard.index, c.index) << c.engine;
    EXPECT_EQ(s->shard.count, c.count) << c.engine;
  }
}

TEST(Engines, RecordsTheJobIdentifiers) {
  std::string error;
  auto s = shard_from_engines("auto", env_of({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "0"},
                                              {"SLURM_ARRAY_TASK_MAX", "2"}, {"SLURM_ARRAY_TASK_COUNT", "3"},
                                              {"SLURM_ARRAY_JOB_ID", "77"}, {"SLURM_JOB_ID", "79"}}),
                              error);
  ASSERT_TRUE(s) << error;
  Json j = engine_shard_json(*s);
  EXPECT_EQ(j["engine"], "slurm");
  EXPECT_EQ(j["shard"], "2/3");
  EXPECT_EQ(j["job"]["SLURM_ARRAY_JOB_ID"], "77");
  EXPECT_EQ(j["job"]["SLURM_JOB_ID"], "79");
  EXPECT_EQ(j["variables"]["SLURM_ARRAY_TASK_ID"], "1");
  auto g = shard_from_engines("auto", env_of({{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "2"}, {"CI_JOB_ID", "5"}}),
                              error);
  ASSERT_TRUE(g) << error;
  EXPECT_EQ(engine_shard_json(*g)["job"]["CI_JOB_ID"], "5");
}

TEST(Engines, KubernetesTakesTheCountFromAutoN) {
  std::string error;
  auto s = shard_from_engines("auto/3", env_of({{"JOB_COMPLETION_INDEX", "2"}}), error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(s->shard.index, 3);
  EXPECT_EQ(s->shard.count, 3);
}

TEST(Engines, MissingCountIsRefusedNamingTheVariables) {
  std::string error;
  EXPECT_FALSE(shard_from_engines("auto", env_of({{"JOB_COMPLETION_INDEX", "2"}}), error));
  EXPECT_NE(error.find("JOB_COMPLETION_INDEX"), std::string::npos) << error;
  EXPECT_NE(error.find("auto/N"), std::string::npos) << error;
  EXPECT_NE(error.find(kShardCountVariable), std::string::npos) << error;
}

TEST(Engines, EnginesThatDisagreeAreRefused) {
  std::string error;
  EXPECT_FALSE(shard_from_engines(
      "auto", env_of({{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "2"}, {"GTEST_SHARD_INDEX", "1"}, {"GTEST_TOTAL_SHARDS", "2"}}),
      error));
  EXPECT_NE(error.find("disagree"), std::string::npos) << error;
  EXPECT_NE(error.find("CI_NODE_INDEX"), std::string::npos) << error;
  EXPECT_NE(error.find("GTEST_SHARD_INDEX"), std::string::npos) << error;
  // Engines that agree (Bazel runs GoogleTest with both) are one shard.
  auto s = shard_from_engines(
      "auto", env_of({{"TEST_SHARD_INDEX", "1"}, {"TEST_TOTAL_SHARDS", "2"}, {"GTEST_SHARD_INDEX", "1"}, {"GTEST_TOTAL_SHARDS", "2"}}),
      error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(s->shard.index, 2);
  // auto/N against the engine's own count.
  EXPECT_FALSE(shard_from_engines("auto/4", env_of({{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "2"}}), error));
  EXPECT_NE(error.find("count given is 4"), std::string::npos) << error;
}

TEST(Engines, SlurmListOfIndicesIsRefused) {
  std::string error;
  // --array=1,3,7: MIN 1, MAX 7, STEP 1, COUNT 3.
  EXPECT_FALSE(shard_from_engines("auto", env_of({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_MIN", "1"},
                                                  {"SLURM_ARRAY_TASK_MAX", "7"}, {"SLURM_ARRAY_TASK_STEP", "1"},
                                                  {"SLURM_ARRAY_TASK_COUNT", "3"}}),
                                  error));
  EXPECT_NE(error.find("SLURM_ARRAY_TASK_COUNT"), std::string::npos) << error;
  EXPECT_NE(error.find("--array=0-2"), std::string::npos) << error;
}

TEST(Engines, NothingSetOrBadValuesAreRefused) {
  std::string error;
  EXPECT_FALSE(shard_from_engines("auto", env_of({}), error));
  EXPECT_NE(error.find("SLURM_ARRAY_TASK_ID"), std::string::npos) << error;
  EXPECT_NE(error.find("CIRCLE_NODE_INDEX"), std::string::npos) << error;
  EXPECT_FALSE(shard_from_engines("auto", env_of({{"CI_NODE_INDEX", "0"}, {"CI_NODE_TOTAL", "2"}}), error));
  EXPECT_NE(error.find("CI_NODE_INDEX=0"), std::string::npos) << error;
  EXPECT_FALSE(shard_from_engines("auto", env_of({{"CIRCLE_NODE_INDEX", "x"}, {"CIRCLE_NODE_TOTAL", "2"}}), error));
  EXPECT_NE(error.find("CIRCLE_NODE_INDEX=x"), std::string::npos) << error;
  EXPECT_FALSE(shard_from_engines("auto", env_of({{"CIRCLE_NODE_INDEX", "2"}, {"CIRCLE_NODE_TOTAL", "2"}}), error));
  EXPECT_NE(error.find("past the count"), std::string::npos) << error;
  EXPECT_FALSE(shard_from_engines("auto/x", env_of({{"CIRCLE_NODE_INDEX", "0"}}), error));
  EXPECT_NE(error.find("auto/x"), std::string::npos) << error;
  EXPECT_TRUE(is_auto_shard("auto/3"));
  EXPECT_FALSE(is_auto_shard("2/3"));
}

}  // namespace
}  // namespace mh
