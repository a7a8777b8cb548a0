// The search of `harness squeeze` (commands/squeeze_command.cpp): the
// smallest memory limit at which a run keeps its speed, found by a log-scale
// bisection from the unlimited cgroup peak down. Pure functions over the
// probes made so far; the command runs them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare.h"

namespace mh::squeeze {

struct Settings {
  double width = 0.10;   // the bracket is narrow enough when hi - lo <= width * hi
  int max_probes = 10;   // limits tried, at most
};

// One limit tried, with every round of it so far.
struct Probe {
  uint64_t limit = 0;  // bytes
  bool keeps = false;
  bool confirmed = false;  // the final bracket's extra rounds were added
  int rounds = 0;
  std::string why;  // why it does not keep its speed ("" when it does)
  // Not kept, not shown slower either: its interval still reached both sides
  // of the threshold when its rounds ran out (its cost sits on it). Such a
  // limit ends no bracket: it lies inside one.
  bool on_threshold = false;
};

// Whether a probe keeps its speed, judged on the change of the figure of
// merit within rounds (compare.h's `paired`: each round's limited run against
// its own unlimited runs, so a machine that drifts moves both alike) and its
// interval, asked at 90% so that each end is a one-sided 95% bound:
//   keeps: the worse end of the interval is within the allowed change, or
//     within the absolute floor as an amount (never the gap between the
//     medians, which runs of different rounds can close by chance);
//   slower: the better end is beyond the allowed change;
//   undecided: the interval reaches both sides, or the rounds are too few for
//     an interval: more rounds can tell. With `last` (no more rounds to be
//     had), an interval that still reaches both sides is on the threshold: not
//     kept (a limit keeps its speed only when shown to), not shown slower
//     either, so that it cannot end a bracket (bracket_of).
// The allowed change is the threshold, whatever the figure's own scatter: a
// scatter floor (as compare's verdict has) once let phase-shift's file phase,
// whose unlimited runs move 20-90% within a round, keep its speed at limits
// that cost it 40% with 23 000 limit events and 30 ms of stall. Its scatter
// within rounds (compare.h's paired_noise_floor) is reported beside the
// verdict. A limit the runs never reached keeps its speed whatever the
// figure says (limit_never_reached).
// Without a change within rounds (a figure that never came, or is not
// positive) the compare rule on the medians: worse by more than the larger of
// the threshold and the noise floor is slower.
struct Speed {
  bool keeps = false;
  bool decided = true;
  bool on_threshold = false;  // with last: neither kept nor shown slower
  std::string why;  // why it is slower, or undecided; "" when it keeps its speed
  double allowed = 0;  // the worst change it may have, as a share
  double floor = 0;    // the unlimited runs' scatter within rounds, reported (0: none yet, or judged on the medians)
};
Speed judge_speed(const MetricComparison& m, bool last);

// Whether the limit never bit: every limited run (role candidate) is ok and
// counted 0 limit events (v1 memory.failcnt, v2 memory.events max). The group
// never reached its limit, no charge waited on reclaim because of it, so the
// limit cannot have slowed the run, whatever a noisy figure of merit says
// (phase-shift's file phase scatters by tens of percent at limits above its
// peak). False with no limited run or where a run has no count.
bool limit_never_reached(const std::vector<RunRecord>& runs);

// The confidence of the interval judge_speed reads (two-sided; each end a
// one-sided 95% bound).
inline constexpr double kIntervalConfidence = 0.90;
// The rounds a probe starts with: the fewest whose interval at that
// confidence has ends (five ratios all within, or all beyond, the threshold),
// as many as compare's least.
inline constexpr int kFirstRounds = kMinRounds;

// The bracket: lo the largest limit shown to fail (slower beyond the
// threshold, an OOM kill or a failed run; 0: none yet), hi the smallest that
// kept its speed above it (the start, the unlimited cgroup peak, until one
// did; 0 when the start was tried and did not). Limits on the threshold
// between them are the band: where the cost sits on the threshold for a range
// of limits (a plateau), the bracket holds that range rather than a point of
// it that the next sitting's noise moves.
struct Bracket {
  uint64_t lo = 0, hi = 0;
  const Probe* lo_probe = nullptr;
  const Probe* hi_probe = nullptr;  // nullptr while hi is the start, untried
  uint64_t band_lo = 0, band_hi = 0;  // the lowest and highest limit on the threshold in (lo, hi); 0: none
};
Bracket bracket_of(const std::vector<Probe>& probes, uint64_t start);
// What a bracket with a band says of it ("" without one).
std::string band_said(const Bracket& b);
bool narrow(const Bracket& b, const Settings& s);

// What to do next: try a new limit, add the extra rounds to one end of the
// final bracket, or stop (the bracket is narrow and confirmed, or the probes
// are used up, or the limit would fall below `floor`). With a band in the
// bracket the next limit halves the wider of the gaps on either side of it
// (between lo and the band, between the band and hi), while one is wider than
// half the bracket width; when neither is, the bracket is as narrow as the
// cost's plateau lets it be and is confirmed as it stands. Where the unlimited
// cgroup peak (`start`) itself slows the run, the search goes up from it one
// bracket width at a time, to twice the peak at most.
struct Step {
  enum class What { Probe, Confirm, Done } what = What::Done;
  uint64_t limit = 0;
  std::string why_done;  // for Done
};
Step next_step(const std::vector<Probe>& probes, uint64_t start, uint64_t floor, const Settings& s);

}  // namespace mh::squeeze
