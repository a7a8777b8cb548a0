// The sequential rule of `compare --runs auto` on hand-made rounds, and its
// error rates by replay: A against A must call a regression in at most alpha
// of the replays, and a true change of twice the threshold "same" in at most
// alpha. Fixed seeds; a few seconds.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>

#include "compare/sequential.h"

namespace mh::compare {
namespace {

MetricRule lower(double threshold, double min_delta = 0) { return MetricRule{Direction::Lower, threshold, min_delta}; }

// `rounds` rounds of a metric around `centre`, scattered by `spread`
// (relative, normal), the candidate moved by `change`.
MetricRounds noisy(const std::string& name, double centre, double spread, double change, int rounds, uint64_t seed,
                   MetricRule rule) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  MetricRounds m{name, rule, {}, {}, {}};
  for (int i = 0; i < rounds; ++i) {
    m.base.push_back(centre * (1 + spread * z(rng)));
    m.cand.push_back(centre * (1 + change) * (1 + spread * z(rng)));
    m.again.push_back(centre * (1 + spread * z(rng)));
  }
  return m;
}

TEST(Sequential, LooksEndAtTheCap) {
  EXPECT_EQ(looks_up_to(20), (std::vector<int>{5, 8, 12, 20}));
  EXPECT_EQ(looks_up_to(10), (std::vector<int>{5, 8, 10}));
  EXPECT_EQ(looks_up_to(5), (std::vector<int>{5}));
  EXPECT_DOUBLE_EQ(alpha_per_look(0.05, 4), 0.0125);
}

TEST(Sequential, EquivalentWhenEveryValueIsWithinTheThreshold) {
  // Baseline 100 +- 0.5, candidate 100.5 +- 0.5, threshold 5%: the candidate
  // is surely below 105 and above 95 in every pair: both one-sided p = 1/3003.
  const std::vector<double> base = {99.5, 99.7, 99.9, 100.1, 100.3, 99.6, 99.8, 100.0, 100.2, 100.4};
  const std::vector<double> cand = {100.1, 100.3, 100.5, 100.7, 100.9};
  EXPECT_TRUE(equivalent(base, cand, 0.05, 0.001));
  // A 1% threshold cannot rule out the candidate being 1% worse: 101 sits among its values.
  EXPECT_FALSE(equivalent(base, cand, 0.003, 0.001));
}

TEST(Sequential, AClearRegressionIsDecidedAtTheFirstLook) {
  std::vector<MetricRounds> m = {noisy("peak", 1000, 0.01, 0.30, 20, 1, lower(0.05))};
  const auto o = run_sequential(m, looks_up_to(20), 0.05);
  EXPECT_EQ(o.decisions[0], Decision::Regression);
  EXPECT_EQ(o.rounds_needed[0], 5);
  EXPECT_EQ(o.rounds_run, 5);
}

TEST(Sequential, AnInformationalMetricIsNeverWaitedFor) {
  std::vector<MetricRounds> m = {noisy("peak", 1000, 0.01, 0.30, 20, 1, lower(0.05)),
                                 noisy("faults", 1000, 0.5, 0, 20, 2, MetricRule{Direction::None, 0.05, 0})};
  const auto o = run_sequential(m, looks_up_to(20), 0.05);
  EXPECT_EQ(o.rounds_run, 5);
  EXPECT_EQ(o.decisions[1], Decision::Unknown);
}

TEST(Sequential, AChangeBetweenOneAndTwoThresholdsInItsOwnSpreadNeedsMoreRounds) {
  // 7% worse against a 5% threshold, each run scattered by 6%: five rounds
  // cannot tell, more can.
  std::vector<MetricRounds> m = {noisy("area", 1000, 0.06, 0.14, 20, 7, lower(0.05))};
  const auto o = run_sequential(m, looks_up_to(20), 0.05);
  EXPECT_GT(o.rounds_needed[0], 5);
}

TEST(Sequential, ATimeThatNeverCameRanksAsCensoredAtEveryLook) {
  // Baseline runs that ended 300-340 ms after their mark with memory still not
  // back (censored at those bounds); candidate times that came, 400-440 ms.
  // Ranked at their bounds the baseline would look faster in every pair and
  // the candidate a regression; as censored values no pair can be told apart.
  MetricRounds m{"after.ms_to_90pct", lower(0.05), {}, {}, {}};
  for (int i = 0; i < 20; ++i) {
    m.base.push_back(300 + 2 * i);
    m.again.push_back(301 + 2 * i);
    m.cand.push_back(400 + 2 * i);
  }
  EXPECT_EQ(run_sequential({m}, looks_up_to(20), 0.05).decisions[0], Decision::Regression);
  m.base_above.assign(20, 1);
  m.again_above.assign(20, 1);
  EXPECT_NE(run_sequential({m}, looks_up_to(20), 0.05).decisions[0], Decision::Regression);
  // The other way: memory never back in the baseline within 3000 ms, back in
  // 120-160 ms in the candidate: an improvement at the first look.
  MetricRounds never{"after.ms_to_90pct", lower(0.05), {}, {}, {}};
  for (int i = 0; i < 20; ++i) {
    never.base.push_back(3000 + i);
    never.again.push_back(3001 + i);
    never.cand.push_back(120 + 2 * i);
  }
  never.base_above.assign(20, 1);
  never.again_above.assign(20, 1);
  const auto o = run_sequential({never}, looks_up_to(20), 0.05);
  EXPECT_EQ(o.decisions[0], Decision::Improvement);
  EXPECT_EQ(o.rounds_needed[0], 5);
}

// Forty recorded rounds of A against A: four metrics of different spread.
std::vector<MetricRounds> a_against_a() {
  return {noisy("peak_rss_kb", 50000, 0.005, 0, 40, 11, lower(0.03, 1024)),
          noisy("rss_area_mb_s", 20, 0.03, 0, 40, 12, lower(0.05)),
          noisy("after.ms_to_90pct", 120, 0.08, 0, 40, 13, lower(0.10, 10)),
          noisy("workload.ms", 300, 0.04, 0, 40, 14, lower(0.10))};
}

TEST(Sequential, ReplayOfAAgainstAKeepsFalseRegressionsUnderAlpha) {
  const auto rates = replay(a_against_a(), looks_up_to(20), 0.05, 1000, 0, 42);
  EXPECT_EQ(rates.resamples, 1000);
  EXPECT_LE(rates.any_regression, 50);
  int total = 0;
  for (const auto& [rounds, n] : rates.rounds_run) total += n;
  EXPECT_EQ(total, 1000);
}

TEST(Sequential, ReplayOfTwiceTheThresholdIsRarelySame) {
  const auto rates = replay(a_against_a(), looks_up_to(20), 0.05, 1000, 2, 43);
  for (const auto& [metric, decisions] : rates.by_metric) {
    const auto same = decisions.find("same");
    EXPECT_LE(same == decisions.end() ? 0 : same->second, 50) << metric;
  }
}

// Rounds recorded once by the harness, A against A (scripts/aa_rounds.py on
// a comparison's runs report; the command is in the fixture), with the
// shipped thresholds: the rule's error rates on real run-to-run scatter.
std::map<std::string, std::vector<MetricRounds>> recorded_rounds() {
  std::string error;
  auto t = load_thresholds(std::string(MEMHARNESS_SOURCE_DIR_FOR_TESTS) + "/ci/thresholds.json", error);
  EXPECT_TRUE(t) << error;
  std::ifstream in(std::string(FIXTURE_DIR) + "/aa-rounds.json");
  const Json j = Json::parse(in, nullptr, false);
  EXPECT_FALSE(j.is_discarded());
  std::map<std::string, std::vector<MetricRounds>> out;
  if (!t || j.is_discarded()) return out;
  // A role's censored values: their indices under "<role>-above".
  const auto flags = [](const Json& m, const char* role, size_t n) {
    std::vector<char> out(n, 0);
    if (auto at = m.find(std::string(role) + "-above"); at != m.end())
      for (const auto& i : *at) out.at(i.get<size_t>()) = 1;
    return out;
  };
  for (const auto& [workload, metrics] : j["workloads"].items())
    for (const auto& [name, m] : metrics.items()) {
      MetricRounds r{name, t->rule_for(name, m["better"].get<std::string>()),
                     m["baseline"].get<std::vector<double>>(), m["candidate"].get<std::vector<double>>(),
                     m["baseline-again"].get<std::vector<double>>()};
      r.base_above = flags(m, "baseline", r.base.size());
      r.cand_above = flags(m, "candidate", r.cand.size());
      r.again_above = flags(m, "baseline-again", r.again.size());
      out[workload].push_back(std::move(r));
    }
  return out;
}

std::string rounds_used(const ReplayRates& r) {
  std::string out;
  for (const auto& [rounds, n] : r.rounds_run) out += fmt::format(" {} rounds: {};", rounds, n);
  return out;
}

TEST(Sequential, RecordedAAgainstAIsARegressionInAtMostAlphaOfTheReplays) {
  const auto recorded = recorded_rounds();
  ASSERT_FALSE(recorded.empty());
  for (const auto& [workload, metrics] : recorded) {
    const auto rates = replay(metrics, looks_up_to(20), 0.05, 1000, 0, 2026);
    EXPECT_LE(rates.any_regression, 50) << workload;
    fmt::print("{}: {} metrics, A against A: a regression in {} of 1000 replays;{}\n", workload, metrics.size(),
               rates.any_regression, rounds_used(rates));
    for (const auto& [metric, decisions] : rates.by_metric) {
      std::string said;
      for (const auto& [decision, n] : decisions) said += fmt::format(" {} {};", decision, n);
      fmt::print("  {}:{}\n", metric, said);
    }
  }
}

TEST(Sequential, RecordedRoundsWithTwiceTheThresholdInjectedAreSameInAtMostAlpha) {
  for (const auto& [workload, metrics] : recorded_rounds()) {
    const auto rates = replay(metrics, looks_up_to(20), 0.05, 1000, 2, 2027);
    for (const auto& [metric, decisions] : rates.by_metric) {
      const auto same = decisions.find("same");
      const int n = same == decisions.end() ? 0 : same->second;
      EXPECT_LE(n, 50) << workload << ": " << metric;
      const auto regression = decisions.find("regression");
      fmt::print("{}: {} +2 thresholds: same in {}, regression in {} of 1000;{}\n", workload, metric, n,
                 regression == decisions.end() ? 0 : regression->second, rounds_used(rates));
    }
  }
}

}  // namespace
}  // namespace mh::compare

namespace mh::compare {
namespace {

// Five rounds of a workload whose gated peak RSS regressed by 30% and whose
// reported wall time scatters by half: the regression is decided at the first
// look and the scatter asks for no more rounds, since only a gated metric may.
TEST(Sequential, OnlyAnUndecidedGatedMetricAsksForMoreRounds) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> z(0, 1);
  std::vector<RunRecord> runs;
  for (int k = 0; k < 5; ++k)
    for (const char* role : {kRoleBaseline, kRoleCandidate, kRoleBaselineAgain}) {
      RunRecord r;
      r.workload = "w";
      r.role = role;
      r.repetition = k;
      r.status = Status::Ok;
      r.peak_rss_kb = std::string(role) == kRoleCandidate ? 13000 + k : 10000 + k;
      r.wall_ms = 100 * (1 + 0.5 * std::fabs(z(rng)));
      r.samples.resize(1);  // a run with no sample has no RSS figures
      runs.push_back(r);
    }
  Comparison c;
  WorkloadComparison w;
  w.workload = "w";
  w.metrics.resize(2);
  w.metrics[0].metric = "peak_rss_kb";
  w.metrics[0].rule = lower(0.05);
  w.metrics[0].gated = true;
  w.metrics[1].metric = "wall_ms";
  w.metrics[1].rule = lower(0.05);
  w.metrics[1].gated = false;
  c.workloads.push_back(w);
  EXPECT_TRUE(apply_sequential(c, runs, looks_up_to(20), 0.05).empty());
  EXPECT_EQ(c.workloads[0].metrics[0].decision, "regression");
  EXPECT_EQ(c.workloads[0].metrics[1].decision, "unknown");
  // Gated, the scattered wall time is what keeps the comparison going.
  c.workloads[0].metrics[1].gated = true;
  EXPECT_EQ(apply_sequential(c, runs, looks_up_to(20), 0.05), std::vector<std::string>{"w"});
}

}  // namespace
}  // namespace mh::compare
