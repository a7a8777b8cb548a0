// The search of harness squeeze on hand-made probes: the bracket, the next
// limit (halving until a limit fails, then the log-scale middle), the extra
// rounds at both ends of a narrow bracket, the budget, and the rule that
// says a probe kept its speed (within rounds, by its interval).
#include <gtest/gtest.h>

#include "compare/compare_stats.h"
#include "compare/squeeze_search.h"
#include "core/stats.h"

namespace mh {
namespace {

using squeeze::Probe;
using squeeze::Step;
constexpr uint64_t MiB = 1ull << 20;

Probe probe(uint64_t mib, bool keeps, bool confirmed = false) { return Probe{mib * MiB, keeps, confirmed, 3, keeps ? "" : "slower"}; }

TEST(SqueezeSearch, HalvesFromThePeakUntilALimitFails) {
  const squeeze::Settings s;
  Step first = squeeze::next_step({}, 1000 * MiB, 4 * MiB, s);
  ASSERT_EQ(first.what, Step::What::Probe);
  EXPECT_EQ(first.limit, 500 * MiB);
  Step second = squeeze::next_step({probe(500, true)}, 1000 * MiB, 4 * MiB, s);
  EXPECT_EQ(second.limit, 250 * MiB);
}

TEST(SqueezeSearch, BisectsOnALogScaleBetweenAFailureAndAKeep) {
  const squeeze::Settings s;
  const std::vector<Probe> probes = {probe(500, true), probe(250, false)};
  const auto b = squeeze::bracket_of(probes, 1000 * MiB);
  EXPECT_EQ(b.lo, 250 * MiB);
  EXPECT_EQ(b.hi, 500 * MiB);
  Step next = squeeze::next_step(probes, 1000 * MiB, 4 * MiB, s);
  ASSERT_EQ(next.what, Step::What::Probe);
  EXPECT_EQ(next.limit, 354 * MiB);  // sqrt(250 * 500) = 353.6, in whole MiB
}

TEST(SqueezeSearch, ANarrowBracketIsConfirmedAtBothEndsThenDone) {
  const squeeze::Settings s;  // 10%
  std::vector<Probe> probes = {probe(500, true), probe(460, false)};
  EXPECT_TRUE(squeeze::narrow(squeeze::bracket_of(probes, 1000 * MiB), s));
  Step hi = squeeze::next_step(probes, 1000 * MiB, 4 * MiB, s);
  EXPECT_EQ(hi.what, Step::What::Confirm);
  EXPECT_EQ(hi.limit, 500 * MiB);
  probes[0].confirmed = true;
  Step lo = squeeze::next_step(probes, 1000 * MiB, 4 * MiB, s);
  EXPECT_EQ(lo.what, Step::What::Confirm);
  EXPECT_EQ(lo.limit, 460 * MiB);
  probes[1].confirmed = true;
  EXPECT_EQ(squeeze::next_step(probes, 1000 * MiB, 4 * MiB, s).what, Step::What::Done);
  // A confirmation that turns the top around moves the bracket up: the peak itself is tried.
  probes[0].keeps = false;
  Step up = squeeze::next_step(probes, 1000 * MiB, 4 * MiB, s);
  EXPECT_EQ(up.what, Step::What::Probe);
  EXPECT_GT(up.limit, 500 * MiB);
}

TEST(SqueezeSearch, TheUntriedPeakIsTriedBeforeItEndsABracket) {
  const squeeze::Settings s;
  Step top = squeeze::next_step({probe(950, false)}, 1000 * MiB, 4 * MiB, s);
  EXPECT_EQ(top.what, Step::What::Probe);
  EXPECT_EQ(top.limit, 1000 * MiB);
}

TEST(SqueezeSearch, APeakThatSlowsTheRunIsFollowedByALimitAboveIt) {
  const squeeze::Settings s;  // 10%
  // The peak (1000 MiB) and everything below it failed: 1111 MiB closes a 10% bracket.
  std::vector<Probe> probes = {probe(500, false), probe(1000, false)};
  Step up = squeeze::next_step(probes, 1000 * MiB, 4 * MiB, s);
  ASSERT_EQ(up.what, Step::What::Probe);
  EXPECT_EQ(up.limit, 1111 * MiB);
  probes.push_back(probe(1111, true));
  EXPECT_TRUE(squeeze::narrow(squeeze::bracket_of(probes, 1000 * MiB), s));
  EXPECT_EQ(squeeze::next_step(probes, 1000 * MiB, 4 * MiB, s).what, Step::What::Confirm);
  // Up to twice the peak, then it says where it gave up.
  probes.back().keeps = false;
  EXPECT_EQ(squeeze::next_step(probes, 1000 * MiB, 4 * MiB, s).limit, 1234 * MiB);
  probes = {probe(1900, false)};
  Step done = squeeze::next_step(probes, 1000 * MiB, 4 * MiB, s);
  EXPECT_EQ(done.what, Step::What::Done);
  EXPECT_NE(done.why_done.find("up to 1992 MB (1.9 times the unlimited cgroup peak)"), std::string::npos) << done.why_done;
}

TEST(SqueezeSearch, StopsWhenTheProbesAreUsedUp) {
  squeeze::Settings s;
  s.max_probes = 2;
  Step done = squeeze::next_step({probe(500, true), probe(250, false)}, 1000 * MiB, 4 * MiB, s);
  EXPECT_EQ(done.what, Step::What::Done);
  EXPECT_NE(done.why_done.find("2 probes"), std::string::npos) << done.why_done;
}

// A wall-time comparison whose rounds ran at `base` unlimited and `ratio`
// times that under the limit: the machine's drift is in `base`, the limit's
// cost in `ratio`.
MetricComparison in_rounds(const std::vector<double>& base, const std::vector<double>& ratio) {
  MetricComparison m;
  m.metric = "wall_ms";
  m.rule = MetricRule{compare::Direction::Lower, 0.10, 5};
  std::vector<double> cand;
  for (size_t k = 0; k < base.size(); ++k) cand.push_back(base[k] * ratio[k]);
  m.baseline.median = stats::median(base);
  m.candidate.median = stats::median(cand);
  m.change = m.candidate.median / m.baseline.median - 1;
  m.paired = compare::paired_change(base, cand, squeeze::kIntervalConfidence);
  return m;
}

// A machine that runs some rounds 1.6 times as slow as others.
const std::vector<double> kDrifting = {500, 800, 500, 800, 800};

TEST(SqueezeSearch, ALimitThatCostsMoreThanTheThresholdInEveryRoundIsSlower) {
  const auto m = in_rounds(kDrifting, {1.21, 1.19, 1.24, 1.18, 1.22});
  const auto speed = squeeze::judge_speed(m, false);
  EXPECT_FALSE(speed.keeps);
  EXPECT_TRUE(speed.decided);
  EXPECT_NE(speed.why.find("worse than unlimited within 5 rounds (90% interval 18.0 to 24.0%): beyond the allowed 10.0%"),
            std::string::npos)
      << speed.why;
}

TEST(SqueezeSearch, DriftBetweenRoundsDoesNotMakeALimitSlower) {
  // Most limited runs fell in slow rounds: their median is 60% above the
  // unlimited runs', but each is within 2% of its own round's.
  auto m = in_rounds({500, 800, 500, 800, 800}, {1.02, 0.99, 1.01, 1.00, 1.02});
  m.baseline.median = 500;
  m.candidate.median = 800;
  m.change = 0.6;
  const auto speed = squeeze::judge_speed(m, false);
  EXPECT_TRUE(speed.keeps) << speed.why;
  EXPECT_TRUE(speed.decided);
}

TEST(SqueezeSearch, ACostNearTheThresholdWaitsForMoreRoundsThenIsNotShownToKeepItsSpeed) {
  const auto m = in_rounds(kDrifting, {1.08, 1.13, 1.06, 1.12, 1.09});
  const auto more = squeeze::judge_speed(m, false);
  EXPECT_FALSE(more.decided);
  EXPECT_NE(more.why.find("not shown within the allowed 10.0%"), std::string::npos) << more.why;
  const auto last = squeeze::judge_speed(m, true);
  EXPECT_TRUE(last.decided);
  EXPECT_FALSE(last.keeps);
  EXPECT_TRUE(last.on_threshold);  // neither kept nor shown slower
  // A cost shown beyond the threshold is slower, not on it, when the rounds run out.
  EXPECT_FALSE(squeeze::judge_speed(in_rounds(kDrifting, {1.21, 1.19, 1.24, 1.18, 1.22}), true).on_threshold);
}

Probe on_threshold(uint64_t mib) {
  Probe p = probe(mib, false);
  p.on_threshold = true;
  return p;
}

TEST(SqueezeSearch, ALimitOnTheThresholdEndsNoBracketAndTheGapsBesideItAreSplit) {
  const squeeze::Settings s;  // 10%
  // burst-writefile's grid: 217 kept, 182 shown slower, 199 on the threshold.
  std::vector<Probe> probes = {probe(217, true), on_threshold(199), probe(182, false)};
  auto b = squeeze::bracket_of(probes, 217 * MiB);
  EXPECT_EQ(b.lo, 182 * MiB);
  EXPECT_EQ(b.hi, 217 * MiB);
  EXPECT_EQ(b.band_lo, 199 * MiB);
  EXPECT_EQ(b.band_hi, 199 * MiB);
  EXPECT_FALSE(squeeze::narrow(b, s));  // 16%
  // Both gaps are wider than 5%; the one below (199 / 182) is the wider.
  Step next = squeeze::next_step(probes, 217 * MiB, 4 * MiB, s);
  ASSERT_EQ(next.what, Step::What::Probe);
  EXPECT_EQ(next.limit, 190 * MiB);
  probes.push_back(probe(190, false));
  next = squeeze::next_step(probes, 217 * MiB, 4 * MiB, s);  // 190-199 is within 5%: above it
  ASSERT_EQ(next.what, Step::What::Probe);
  EXPECT_EQ(next.limit, 208 * MiB);
  probes.push_back(probe(208, true));
  b = squeeze::bracket_of(probes, 217 * MiB);
  EXPECT_EQ(b.lo, 190 * MiB);
  EXPECT_EQ(b.hi, 208 * MiB);
  EXPECT_TRUE(squeeze::narrow(b, s));  // 8.7%, the band inside
  EXPECT_NE(squeeze::band_said(b).find("on the threshold at 208.7 MB"), std::string::npos) << squeeze::band_said(b);
  EXPECT_EQ(squeeze::next_step(probes, 217 * MiB, 4 * MiB, s).what, Step::What::Confirm);
}

TEST(SqueezeSearch, APlateauOnTheThresholdEndsWithTheBracketThatHoldsIt) {
  const squeeze::Settings s;  // 10%
  // sort's: OOM-killed at 27 MiB, a cost of 6-10% from 28 to 38 MiB, kept at 39.
  std::vector<Probe> probes = {probe(39, true, true), on_threshold(38), on_threshold(31), on_threshold(28),
                               probe(27, false, true)};
  const auto b = squeeze::bracket_of(probes, 39 * MiB);
  EXPECT_EQ(b.band_lo, 28 * MiB);
  EXPECT_EQ(b.band_hi, 38 * MiB);
  const Step done = squeeze::next_step(probes, 39 * MiB, 4 * MiB, s);
  ASSERT_EQ(done.what, Step::What::Done);
  EXPECT_NE(done.why_done.find("on the threshold from 29.4 to 39.8 MB"), std::string::npos) << done.why_done;
  EXPECT_NE(done.why_done.find("wider than 10%"), std::string::npos) << done.why_done;
  // A confirmation that puts the bottom on the threshold too moves the bracket down.
  probes.back().on_threshold = true;
  const Step down = squeeze::next_step(probes, 39 * MiB, 4 * MiB, s);
  ASSERT_EQ(down.what, Step::What::Probe);
  EXPECT_EQ(down.limit, 13 * MiB);  // no limit shown to fail: half the band's bottom
}

TEST(SqueezeSearch, APeakOnTheThresholdIsFollowedByALimitAboveIt) {
  const squeeze::Settings s;
  const std::vector<Probe> probes = {probe(500, false), on_threshold(1000)};
  const Step up = squeeze::next_step(probes, 1000 * MiB, 4 * MiB, s);
  ASSERT_EQ(up.what, Step::What::Probe);
  EXPECT_EQ(up.limit, 1111 * MiB);
}

TEST(SqueezeSearch, EqualMediansDoNotHideACostEachRoundShows) {
  // burst-writefile under mimalloc at 182 MB: the limited and the unlimited
  // runs met at the same median (529.4 and 529.6 ms, within the 5 ms floor),
  // while its rounds said 8% slower, 90% interval 1.8 to 14.2%.
  auto m = in_rounds({510, 560, 529.6, 470, 480}, {1.14, 1.02, 1.08, 1.12, 1.03});
  m.baseline.median = 529.6;
  m.candidate.median = 529.4;
  m.change = m.candidate.median / m.baseline.median - 1;
  const auto more = squeeze::judge_speed(m, false);
  EXPECT_FALSE(more.keeps) << more.why;
  EXPECT_FALSE(more.decided);
  EXPECT_FALSE(squeeze::judge_speed(m, true).keeps);
  // A cost whose worst end is within the floor in milliseconds keeps it.
  m = in_rounds({20, 21, 20, 22, 21}, {1.12, 1.10, 1.15, 1.11, 1.13});
  EXPECT_TRUE(squeeze::judge_speed(m, false).keeps) << squeeze::judge_speed(m, false).why;
}

TEST(SqueezeSearch, AFigureThatScattersWithinRoundsIsAllowedOnlyItsThresholdAndSaysItScatters) {
  // The unlimited runs of each round differ by about 30% from each other (a
  // file phase's time): a 15% cost is still beyond the 10% threshold.
  auto m = in_rounds(kDrifting, {1.15, 1.12, 1.18, 1.14, 1.16});
  m.paired_noise_floor = 0.30;
  const auto speed = squeeze::judge_speed(m, false);
  EXPECT_FALSE(speed.keeps);
  EXPECT_DOUBLE_EQ(speed.allowed, 0.10);
  EXPECT_DOUBLE_EQ(speed.floor, 0.30);
  EXPECT_NE(speed.why.find("beyond the allowed 10.0%; its unlimited runs scatter 30.0% within rounds"), std::string::npos)
      << speed.why;
}

RunRecord limited_run(Status status, std::optional<double> events, const std::string& role = kRoleCandidate) {
  RunRecord r;
  r.role = role;
  r.status = status;
  r.memory_group.max_events = events;
  return r;
}

TEST(SqueezeSearch, ALimitNoLimitedRunReachedIsNeverReached) {
  // The unlimited runs' counts do not matter (they have no limit to reach).
  std::vector<RunRecord> runs = {limited_run(Status::Ok, 0.0), limited_run(Status::Ok, 0.0),
                                 limited_run(Status::Ok, std::nullopt, kRoleBaseline)};
  EXPECT_TRUE(squeeze::limit_never_reached(runs));
  runs.push_back(limited_run(Status::Ok, 3.0));  // one charge had to reclaim first
  EXPECT_FALSE(squeeze::limit_never_reached(runs));
  runs.back() = limited_run(Status::Ok, std::nullopt);  // a run without a count (no group)
  EXPECT_FALSE(squeeze::limit_never_reached(runs));
  runs.back() = limited_run(Status::Oom, 0.0);
  EXPECT_FALSE(squeeze::limit_never_reached(runs));
  EXPECT_FALSE(squeeze::limit_never_reached({limited_run(Status::Ok, 0.0, kRoleBaseline)}));  // no limited run
}

TEST(SqueezeSearch, RoundsTooFewForAnIntervalWaitThenFallBackToTheMedians) {
  const auto m = in_rounds({500, 800, 500}, {1.30, 1.30, 1.30});
  ASSERT_TRUE(m.paired && !m.paired->bounded);
  const auto more = squeeze::judge_speed(m, false);
  EXPECT_FALSE(more.decided);
  EXPECT_NE(more.why.find("3 rounds are too few"), std::string::npos) << more.why;
  const auto last = squeeze::judge_speed(m, true);
  EXPECT_TRUE(last.decided);
  EXPECT_FALSE(last.keeps);
  EXPECT_NE(last.why.find("30.0% worse than unlimited (medians"), std::string::npos) << last.why;
}

TEST(SqueezeSearch, ALowerThroughputIsWorse) {
  auto m = in_rounds(kDrifting, {0.80, 0.79, 0.82, 0.81, 0.80});
  m.metric = "workload.requests_per_s";
  m.rule.direction = compare::Direction::Higher;
  EXPECT_FALSE(squeeze::judge_speed(m, false).keeps);
  m = in_rounds(kDrifting, {1.20, 1.22, 1.19, 1.21, 1.20});
  m.rule.direction = compare::Direction::Higher;
  EXPECT_TRUE(squeeze::judge_speed(m, false).keeps);
}

TEST(SqueezeSearch, WithoutRoundsTheMediansAreJudgedByThresholdAndNoiseFloor) {
  MetricComparison m;
  m.metric = "wall_ms";
  m.rule = MetricRule{compare::Direction::Lower, 0.10, 5};
  m.baseline.median = 1000;
  m.candidate.median = 1150;
  m.change = 0.15;
  m.noise_floor = 0.05;
  EXPECT_NE(squeeze::judge_speed(m, false).why.find("15.0% worse"), std::string::npos);
  m.noise_floor = 0.20;  // within the noise
  EXPECT_TRUE(squeeze::judge_speed(m, false).keeps);
  m.noise_floor = 0.05;
  m.candidate.median = 1004;  // within the absolute floor of 5 ms
  EXPECT_TRUE(squeeze::judge_speed(m, false).keeps);
}

}  // namespace
}  // namespace mh
