// The search of harness squeeze on hand-made probes: the bracket, the next
// limit (halving until a limit fails, then the log-scale middle), the extra
// rounds at both ends of a narrow bracket, the budget, and the rule that
// says a probe kept its speed.
#include <gtest/gtest.h>

#include "compare/squeeze_search.h"

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

TEST(SqueezeSearch, ASlowerFigureBeyondThresholdAndNoiseFloorDoesNotKeepItsSpeed) {
  MetricComparison m;
  m.metric = "wall_ms";
  m.rule = MetricRule{compare::Direction::Lower, 0.10, 5};
  m.baseline.median = 1000;
  m.candidate.median = 1150;
  m.change = 0.15;
  m.noise_floor = 0.05;
  EXPECT_NE(squeeze::slower_why(m).find("15.0% worse"), std::string::npos) << squeeze::slower_why(m);
  m.noise_floor = 0.20;  // within the noise
  EXPECT_EQ(squeeze::slower_why(m), "");
  // Higher is better: a throughput 15% lower is worse.
  m.rule.direction = compare::Direction::Higher;
  m.noise_floor = 0.05;
  m.candidate.median = 850;
  m.change = -0.15;
  EXPECT_NE(squeeze::slower_why(m), "");
  m.change = 0.15;  // faster
  m.candidate.median = 1150;
  EXPECT_EQ(squeeze::slower_why(m), "");
}

}  // namespace
}  // namespace mh
