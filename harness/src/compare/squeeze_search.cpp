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

// The limit that splits the gap (a, b) on a log scale, 0 when the gap is no
// wider than half the bracket width (or has no whole limit inside).
uint64_t split_gap(uint64_t a, uint64_t b, const Settings& s) {
  if (b <= a || double(b - a) <= s.width / 2 * double(b)) return 0;
  const uint64_t mid = log_middle(a, b);
  return mid > a && mid < b ? mid : 0;
}

// Inside a bracket that holds a band: the middle of the wider gap beside it
// (on a log scale), 0 when neither can be split.
uint64_t beside_band(const Bracket& b, const Settings& s) {
  const uint64_t below = split_gap(b.lo, b.band_lo, s), above = split_gap(b.band_hi, b.hi, s);
  if (!below || !above) return below ? below : above;
  return double(b.band_lo) / double(b.lo) >= double(b.hi) / double(b.band_hi) ? below : above;
}

std::string band_text(const Bracket& b) {
  return b.band_lo == b.band_hi ? fmt::format("at {:.1f} MB", double(b.band_lo) / 1e6)
                                : fmt::format("from {:.1f} to {:.1f} MB", double(b.band_lo) / 1e6, double(b.band_hi) / 1e6);
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
  out.on_threshold = last && best <= out.allowed;
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
  uint64_t top = 0;  // the largest limit tried that did not keep its speed
  for (const auto& p : probes) {
    if (p.keeps) continue;
    top = std::max(top, p.limit);
    if (!p.on_threshold && p.limit > b.lo) {
      b.lo = p.limit;
      b.lo_probe = &p;
    }
  }
  for (const auto& p : probes)
    if (p.keeps && p.limit > b.lo && (!b.hi_probe || p.limit < b.hi_probe->limit)) b.hi_probe = &p;
  b.hi = b.hi_probe ? b.hi_probe->limit : top < start ? start : 0;
  for (const auto& p : probes)
    if (p.on_threshold && p.limit > b.lo && (b.hi == 0 || p.limit < b.hi)) {
      b.band_lo = b.band_lo ? std::min(b.band_lo, p.limit) : p.limit;
      b.band_hi = std::max(b.band_hi, p.limit);
    }
  return b;
}

bool narrow(const Bracket& b, const Settings& s) {
  return b.lo > 0 && b.hi > b.lo && double(b.hi - b.lo) <= s.width * double(b.hi);
}


std::string band_said(const Bracket& b) {
  if (!b.band_lo) return "";
  return fmt::format("the cost sits on the threshold {} (neither shown to keep the speed nor shown slower when its "
                     "rounds ran out): the bracket holds it", band_text(b));
}

Step next_step(const std::vector<Probe>& probes, uint64_t start, uint64_t floor, const Settings& s) {
  const Bracket b = bracket_of(probes, start);
  const bool budget = int(probes.size()) < s.max_probes;
  auto done = [](std::string why) { return Step{Step::What::Done, 0, std::move(why)}; };
  if (b.hi == 0) {
    // Every limit tried failed or sat on the threshold, the peak too: one
    // bracket's width higher, so that a keep there closes a narrow bracket,
    // up to kCeiling times the peak.
    const uint64_t top = std::max(b.lo, b.band_hi);
    const uint64_t up = uint64_t(double(top) / (1 - s.width)) / kMiB * kMiB;
    if (up <= top || double(up) > kCeiling * double(start))
      return done(fmt::format("not shown to keep its speed at any limit tried, up to {:.0f} MB ({:g} times the unlimited cgroup peak)",
                              double(top) / 1e6, double(top) / double(start)));
    if (!budget) return done(fmt::format("{} probes used and none kept its speed", probes.size()));
    return {Step::What::Probe, up, ""};
  }
  if (b.lo == 0) {
    const uint64_t below = b.band_lo ? b.band_lo : b.hi;
    const uint64_t half = below / 2 / kMiB * kMiB;
    if (half < floor) return done(fmt::format("no limit failed down to {} bytes, the smallest tried", below));
    if (!budget) return done(fmt::format("{} probes used and none failed", probes.size()));
    return {Step::What::Probe, half, ""};
  }
  if (!narrow(b, s)) {
    const uint64_t next = b.band_lo ? beside_band(b, s) : log_middle(b.lo, b.hi);
    if (next) {
      if (!budget) return done(fmt::format("{} probes used before the bracket was within {:.0f}%", probes.size(), s.width * 100));
      return {Step::What::Probe, next, ""};
    }
  }
  if (!b.hi_probe) {
    if (!budget) return done(fmt::format("{} probes used: the top of the bracket (the unlimited cgroup peak) was not tried", probes.size()));
    return {Step::What::Probe, b.hi, ""};
  }
  if (!b.hi_probe->confirmed) return {Step::What::Confirm, b.hi, ""};
  if (!b.lo_probe->confirmed) return {Step::What::Confirm, b.lo, ""};
  if (narrow(b, s)) return done("");
  return done(fmt::format("{}; wider than {:.0f}%, as no gap beside it is wider than half that", band_said(b), s.width * 100));
}

}  // namespace mh::squeeze
