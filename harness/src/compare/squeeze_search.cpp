// The search of harness squeeze (see squeeze_search.h).
#include "compare/squeeze_search.h"

#include <fmt/format.h>

#include <cmath>

namespace mh::squeeze {

namespace {

constexpr uint64_t kMiB = 1ull << 20;
// How far above the unlimited cgroup peak the search looks when the peak itself
// slows the run: one unlimited run's peak is a noisy reading, and a limit at
// it leaves the kernel no room before it reclaims.
constexpr double kCeiling = 2.0;

// The limit halfway between lo and hi on a log scale, in whole MiB where
// that stays strictly between them.
uint64_t log_middle(uint64_t lo, uint64_t hi) {
  const double mid = std::sqrt(double(lo)) * std::sqrt(double(hi));
  const uint64_t exact = uint64_t(mid);
  const uint64_t rounded = (exact + kMiB / 2) / kMiB * kMiB;
  return rounded > lo && rounded < hi ? rounded : exact;
}

// The compare rule on the medians: slower when worse by more than the larger
// of the threshold and the noise floor, past the absolute floor.
Speed judge_by_medians(const MetricComparison& m) {
  const double worse = m.rule.direction == compare::Direction::Higher ? -m.change : m.change;
  Speed out;
  out.allowed = std::max(m.rule.threshold, m.noise_floor);
  out.keeps = worse <= out.allowed || std::fabs(m.candidate.median - m.baseline.median) <= m.rule.min_delta;
  if (!out.keeps)
    out.why = fmt::format("{} {:.1f}% worse than unlimited (medians; allowed: {:.1f}%, the larger of its threshold and "
                          "noise floor)", m.metric, worse * 100, out.allowed * 100);
  return out;
}

}  // namespace

Speed judge_speed(const MetricComparison& m, bool last) {
  if (!m.paired) return judge_by_medians(m);
  const auto& p = *m.paired;
  Speed out;
  out.floor = m.paired_noise_floor.value_or(0);
  out.allowed = m.rule.threshold;
  if (!p.bounded) {
    if (last) return judge_by_medians(m);
    out.decided = false;
    out.why = fmt::format("{} rounds are too few for an interval of the change within rounds", p.rounds);
    return out;
  }
  // As "worse": a lower throughput is worse, and its interval turns round.
  const bool higher = m.rule.direction == compare::Direction::Higher;
  const double worse = higher ? -p.change : p.change;
  const double worst = higher ? -p.lo : p.hi, best = higher ? -p.hi : p.lo;
  // The absolute floor bounds the change within rounds too, never the gap of
  // the two medians: limited and unlimited runs from different rounds may
  // meet at the same median while each round shows the limit's cost.
  const double base = std::fabs(m.baseline.median);
  const bool tiny = base > 0 && worst * base <= m.rule.min_delta;
  if (worst <= out.allowed || tiny) {
    out.keeps = true;
    return out;
  }
  const std::string said = fmt::format("{} {:.1f}% worse than unlimited within {} rounds (90% interval {:.1f} to {:.1f}%)",
                                       m.metric, worse * 100, p.rounds, best * 100, worst * 100);
  out.decided = last || best > out.allowed;
  // A figure whose unlimited runs scatter more than the threshold within a
  // round says so: no number of rounds may show a limit within it.
  const std::string scatter =
      out.floor > m.rule.threshold ? fmt::format("; its unlimited runs scatter {:.1f}% within rounds", out.floor * 100) : "";
  out.why = best > out.allowed ? fmt::format("{}: beyond the allowed {:.1f}%{}", said, out.allowed * 100, scatter)
                               : fmt::format("{}: not shown within the allowed {:.1f}%{}", said, out.allowed * 100, scatter);
  return out;
}

bool limit_never_reached(const std::vector<RunRecord>& runs) {
  int limited = 0;
  for (const auto& r : runs) {
    if (r.role != kRoleCandidate) continue;
    const auto events = r.memory_group.max_events;
    if (r.status != Status::Ok || !events || *events != 0) return false;
    ++limited;
  }
  return limited > 0;
}

Bracket bracket_of(const std::vector<Probe>& probes, uint64_t start) {
  Bracket b;
  for (const auto& p : probes)
    if (!p.keeps && p.limit > b.lo) {
      b.lo = p.limit;
      b.lo_probe = &p;
    }
  for (const auto& p : probes)
    if (p.keeps && p.limit > b.lo && (!b.hi_probe || p.limit < b.hi_probe->limit)) b.hi_probe = &p;
  b.hi = b.hi_probe ? b.hi_probe->limit : b.lo < start ? start : 0;
  return b;
}

bool narrow(const Bracket& b, const Settings& s) {
  return b.lo > 0 && b.hi > b.lo && double(b.hi - b.lo) <= s.width * double(b.hi);
}

Step next_step(const std::vector<Probe>& probes, uint64_t start, uint64_t floor, const Settings& s) {
  const Bracket b = bracket_of(probes, start);
  const bool budget = int(probes.size()) < s.max_probes;
  auto done = [](std::string why) { return Step{Step::What::Done, 0, std::move(why)}; };
  if (b.hi == 0) {
    // Every limit tried failed, the peak too: one bracket's width higher, so
    // that a keep there closes a narrow bracket, up to kCeiling times the peak.
    const uint64_t up = uint64_t(double(b.lo) / (1 - s.width)) / kMiB * kMiB;
    if (up <= b.lo || double(up) > kCeiling * double(start))
      return done(fmt::format("slower than unlimited at every limit tried, up to {:.0f} MB ({:g} times the unlimited cgroup peak)",
                              double(b.lo) / 1e6, double(b.lo) / double(start)));
    if (!budget) return done(fmt::format("{} probes used and none kept its speed", probes.size()));
    return {Step::What::Probe, up, ""};
  }
  if (b.lo == 0) {
    const uint64_t half = b.hi / 2 / kMiB * kMiB;
    if (half < floor) return done(fmt::format("kept its speed down to {} bytes, the smallest limit tried", b.hi));
    if (!budget) return done(fmt::format("{} probes used and none failed", probes.size()));
    return {Step::What::Probe, half, ""};
  }
  if (!narrow(b, s)) {
    if (!budget) return done(fmt::format("{} probes used before the bracket was within {:.0f}%", probes.size(), s.width * 100));
    return {Step::What::Probe, log_middle(b.lo, b.hi), ""};
  }
  if (!b.hi_probe) {
    if (!budget) return done(fmt::format("{} probes used: the top of the bracket (the unlimited cgroup peak) was not tried", probes.size()));
    return {Step::What::Probe, b.hi, ""};
  }
  if (!b.hi_probe->confirmed) return {Step::What::Confirm, b.hi, ""};
  if (!b.lo_probe->confirmed) return {Step::What::Confirm, b.lo, ""};
  return done("");
}

}  // namespace mh::squeeze
