// Shards balanced by expected duration (inputs/balance.h): the longest unit
// first into the least loaded shard, every run in one shard, a comparison's
// round kept whole.
#include "inputs/balance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>

namespace mh {
namespace {

TEST(Balance, LongestFirstIntoTheLeastLoaded) {
  // 7, 5, 4, 3, 3, 2 ms into two shards: 7+3+2 = 12 and 5+4+3 = 12.
  std::vector<ShardUnit> units;
  for (double ms : {3.0, 7.0, 2.0, 5.0, 4.0, 3.0}) units.push_back(ShardUnit{units.size(), 0, ms});
  auto shard_of = balance_units(units, 2);
  auto loads = shard_loads(units, shard_of, 2);
  EXPECT_DOUBLE_EQ(loads[0], 12);
  EXPECT_DOUBLE_EQ(loads[1], 12);
  EXPECT_EQ(shard_of[1], 0);  // 7 ms first, into shard 1
  EXPECT_EQ(shard_of[3], 1);  // 5 ms next, into the empty shard 2
  // By entry (every second one): 3+2+4 = 9 and 7+5+3 = 15.
  auto by_entry = entry_split_loads(units, 2);
  EXPECT_DOUBLE_EQ(by_entry[0], 9);
  EXPECT_DOUBLE_EQ(by_entry[1], 15);
}

TEST(Balance, EveryRunInExactlyOneShard) {
  // Three entries, two allocators, three rounds; one entry ten times as long.
  auto plan = interleave(3, 2, 3, std::nullopt);
  std::vector<double> ms;
  for (const auto& r : plan) ms.push_back(r.job == 0 ? 10.0 : 1.0);
  auto units = plan_units(plan, false, ms);
  ASSERT_EQ(units.size(), 6u);  // (entry, allocator)
  EXPECT_DOUBLE_EQ(units[0].ms, 30);
  auto shard_of = balance_units(units, 3);
  using Run = std::tuple<size_t, size_t, int>;
  std::multiset<Run> seen;
  for (int s = 1; s <= 3; ++s) {
    auto cut = select_balanced(plan, false, units, shard_of, Shard{s, 3});
    EXPECT_FALSE(cut.empty());
    // In the plan's order.
    EXPECT_TRUE(std::is_sorted(cut.begin(), cut.end(), [&](const PlannedRun& a, const PlannedRun& b) {
      auto pos = [&](const PlannedRun& r) {
        return std::find_if(plan.begin(), plan.end(), [&](const PlannedRun& p) {
                 return p.job == r.job && p.arm == r.arm && p.repetition == r.repetition;
               }) - plan.begin();
      };
      return pos(a) < pos(b);
    }));
    for (const auto& r : cut) seen.insert({r.job, r.arm, r.repetition});
  }
  EXPECT_EQ(seen.size(), plan.size());
  EXPECT_EQ(std::set<Run>(seen.begin(), seen.end()).size(), plan.size());
  // The long entry's two allocators go to two shards: 30, 30, 12 ms.
  auto loads = shard_loads(units, shard_of, 3);
  EXPECT_DOUBLE_EQ(*std::max_element(loads.begin(), loads.end()), 30);
  auto by_entry = entry_split_loads(units, 3);
  EXPECT_DOUBLE_EQ(*std::max_element(by_entry.begin(), by_entry.end()), 60);
}

TEST(Balance, AComparisonsRoundStaysInOneShard) {
  // Baseline, candidate and baseline again: three arms, four rounds, two entries.
  auto plan = interleave(2, 3, 4, 42);
  std::vector<double> ms(plan.size(), 1.0);
  auto units = plan_units(plan, true, ms);
  ASSERT_EQ(units.size(), 8u);  // (entry, round)
  auto shard_of = balance_units(units, 3);
  for (int s = 1; s <= 3; ++s) {
    auto cut = select_balanced(plan, true, units, shard_of, Shard{s, 3});
    for (const auto& r : cut) {
      // Every side of this run's round and entry is in the same shard.
      size_t sides = std::count_if(cut.begin(), cut.end(), [&](const PlannedRun& o) {
        return o.job == r.job && o.repetition == r.repetition;
      });
      EXPECT_EQ(sides, 3u);
    }
  }
}

TEST(Balance, ExpectedTimeFallsBackToTheWorkloadThenToAll) {
  Durations d{{{{"a", "glibc"}, 10.0}, {{"a", "scav@abc"}, 30.0}, {{"b", "glibc"}, 100.0}}, "r.json"};
  EXPECT_DOUBLE_EQ(expected_ms(d, "a", "glibc"), 10);
  EXPECT_DOUBLE_EQ(expected_ms(d, "a", "scav"), 20);          // a's mean
  EXPECT_NEAR(expected_ms(d, "c", "glibc"), 140.0 / 3, 1e-9);  // every run's mean
  EXPECT_DOUBLE_EQ(expected_ms(Durations{}, "a", "glibc"), 1);  // nothing known: by count
}

}  // namespace
}  // namespace mh
