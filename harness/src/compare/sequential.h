// The sequential rule of `compare --runs auto`: rounds are added at fixed
// looks until every gating metric is decided, regression, improvement, same
// or (at the cap) unknown. Pure functions over one value per round and role;
// any thread. The replay checks its error rates on recorded rounds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compare/compare.h"

namespace mh::compare {

// The rounds at which the rule looks: 5, 8, 12, 20, 30, 50... up to and
// ending at max_rounds (which must be at least kMinRounds).
std::vector<int> looks_up_to(int max_rounds);

// Error rates across looks: Bonferroni over the looks, so every look spends
// alpha / looks; within a look the metrics of a workload share it by Holm
// (regression, improvement) and Bonferroni (same).
double alpha_per_look(double alpha, size_t looks);

enum class Decision { Regression, Improvement, Same, Unknown };
const char* decision_name(Decision d);

// One metric of one workload: its values by round (index i: round i + 1).
// A time that never came within its run is its bound, flagged in the *_above
// vector of its side (empty when none of that side's is), so that a look
// tests it as censored (Gehan's test) rather than as a time that came.
struct MetricRounds {
  std::string metric;
  MetricRule rule;
  std::vector<double> base, cand, again;
  std::vector<char> base_above = {}, cand_above = {}, again_above = {};
};

// "same": the change it could still be is within the threshold, at 1 - alpha
// each way. Two one-sided Mann-Whitney tests of the candidate against the
// baseline scaled by 1 + threshold and by 1 - threshold (the threshold
// raised to min_delta over the baseline median): both must reject at alpha.
bool equivalent(const std::vector<double>& base, const std::vector<double>& cand, double threshold, double alpha);

// The decisions of a workload's gating metrics (those with a direction) on
// their first `rounds` rounds, at alpha_look. A metric without a direction is
// Unknown and never waited for. In the order given.
std::vector<Decision> decide_look(const std::vector<MetricRounds>& metrics, int rounds, double alpha_look);

// The rule run through every look on rounds already recorded: each metric is
// decided at the first look that decides it, and keeps that decision.
struct SequentialOutcome {
  std::vector<Decision> decisions;  // by metric, as given
  std::vector<int> rounds_needed;   // by metric: the look that decided it, else the last look
  int rounds_run = 0;               // the look at which none was unknown, or the last
};
SequentialOutcome run_sequential(const std::vector<MetricRounds>& metrics, const std::vector<int>& looks,
                                 double alpha);

// A comparison's runs as rounds: each gating metric of each workload by
// role and repetition (a time that never came at its bound), in the order of
// the comparison's metrics.
std::vector<MetricRounds> rounds_of(const WorkloadComparison& w, const std::vector<RunRecord>& runs);

// --runs auto: every gating metric's decision and rounds into `c`, its
// verdict following the decision (same: no change, unknown: noisy), and the
// looks. Returns the workloads with a metric still unknown that have had
// every round of their last look so far: those that need more rounds.
std::vector<std::string> apply_sequential(Comparison& c, const std::vector<RunRecord>& runs,
                                          const std::vector<int>& looks, double alpha);

// Replays run_sequential on `resamples` draws of the recorded rounds (with
// replacement, a round's baseline, candidate and baseline again kept
// together), with the candidate's values moved the bad way by `inject` times
// the threshold each metric's "same" must stay within (0: A against A).
struct ReplayRates {
  int resamples = 0;
  int any_regression = 0;  // resamples in which any metric was called a regression
  std::map<std::string, std::map<std::string, int>> by_metric;  // metric -> decision -> resamples
  std::map<int, int> rounds_run;                                // rounds -> resamples
};
ReplayRates replay(const std::vector<MetricRounds>& recorded, const std::vector<int>& looks, double alpha,
                   int resamples, double inject, uint64_t seed);

}  // namespace mh::compare
