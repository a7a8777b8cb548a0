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
};

// Whether a probe keeps its speed: no run failed and none was OOM-killed, and
// the figure of merit under the limit (candidate) is not worse than unlimited
// (baseline and baseline again) by more than its threshold and noise floor
// (the compare rule's, compare.h), past its absolute floor. "" or why not.
std::string slower_why(const MetricComparison& m);

// The bracket: lo the largest limit that failed (0: none yet), hi the
// smallest that kept its speed above it (the start, the unlimited cgroup
// peak, until one did).
struct Bracket {
  uint64_t lo = 0, hi = 0;
  const Probe* lo_probe = nullptr;
  const Probe* hi_probe = nullptr;  // nullptr while hi is the start, untried
};
Bracket bracket_of(const std::vector<Probe>& probes, uint64_t start);
bool narrow(const Bracket& b, const Settings& s);

// What to do next: try a new limit, add the extra rounds to one end of the
// final bracket, or stop (the bracket is narrow and confirmed, or the probes
// are used up, or the limit would fall below `floor`). Where the unlimited
// cgroup peak (`start`) itself slows the run, the search goes up from it one
// bracket width at a time, to twice the peak at most.
struct Step {
  enum class What { Probe, Confirm, Done } what = What::Done;
  uint64_t limit = 0;
  std::string why_done;  // for Done
};
Step next_step(const std::vector<Probe>& probes, uint64_t start, uint64_t floor, const Settings& s);

}  // namespace mh::squeeze
