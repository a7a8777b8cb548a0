// Steps in a series: a change-point fit over the per-run values (binary
// segmentation under an L1 cost, segments of at least min_segment revisions),
// then each boundary confirmed by the comparison's own test and rule between
// the segments on either side, the weakest unconfirmed boundary dropped until
// all stand (docs/history.md states the rule). Pure functions; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "history/store.h"

namespace mh::history {

struct StepRule {
  size_t min_segment = 2;  // revisions on each side of a step
  double alpha = 0.05;     // of a series: each boundary's test is at alpha / (revisions - 1)
  int resamples = 2000;    // of each step's bootstrap interval (0: none, for simulations)
};

struct Step {
  size_t index = 0;  // of the first point after the step
  std::string revision;
  double before = 0, after = 0;  // medians of the segments either side
  double change = 0;             // relative, after against before
  compare::Interval ci;          // bootstrap 95% interval of the change (of the nearest 100 revisions either side)
  double p = 1;                  // Mann-Whitney, or Gehan's test when a side holds censored values
  bool censored = false;
  compare::Verdict verdict = compare::Verdict::NoChange;  // Regression, Improvement or Changed
};

// The steps of `s` under the metric's rule (direction, threshold, min_delta).
std::vector<Step> find_steps(const Series& s, const MetricRule& rule, const StepRule& r);

}  // namespace mh::history
