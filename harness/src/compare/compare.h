// A comparison of two pins: from run records in the roles baseline, candidate
// and baseline-again to a verdict per metric. Pure functions over records;
// the thresholds come from a JSON file (ci/thresholds.json).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compare/compare_stats.h"
#include "core/metrics.h"
#include "core/record.h"

namespace mh {

inline constexpr const char* kRoleBaseline = "baseline";
inline constexpr const char* kRoleCandidate = "candidate";
inline constexpr const char* kRoleBaselineAgain = "baseline-again";
inline constexpr int kMinRounds = 5;

struct MetricRule {
  compare::Direction direction = compare::Direction::None;
  double threshold = 0.05;  // relative
  double min_delta = 0;     // absolute: smaller differences of the medians are no change
};

struct Thresholds {
  MetricRule fallback;
  std::vector<std::pair<std::string, MetricRule>> rules;  // metric pattern (fnmatch) -> rule, first match wins
  // An entry's "gate": true or false: whether the metrics it matches gate the
  // verdict under --gate declared (first match wins; an entry with only "gate"
  // leaves the metric's rule as it was).
  std::vector<std::pair<std::string, bool>> gates;
  // The rule for a metric of `workload`: the first pattern of the file that
  // matches it ("METRIC", or "WORKLOAD:METRIC" for one workload's only), else
  // the registry's (metrics.h), else the direction its workload declares with
  // the file's default threshold, else the default.
  MetricRule rule_for(const std::string& metric, const std::string& declared_better = "",
                      const std::string& workload = "") const;
};
std::optional<Thresholds> load_thresholds(const std::string& path, std::string& error);

// Which metrics gate the verdict (--gate): each workload's declared set (the
// thresholds file's "gate" entries change it), every metric with a direction,
// or the metrics named (patterns, "WORKLOAD:METRIC" for one workload's). The
// others with a direction are compared and reported, not gated.
struct Gate {
  enum class Kind { Declared, All, Named };
  Kind kind = Kind::Declared;
  std::vector<std::string> names;
};
// "declared", "all" or METRIC,...; nullopt with the error otherwise.
std::optional<Gate> parse_gate(const std::string& text, std::string& error);
const char* gate_name(const Gate& g);

struct MetricComparison {
  std::string metric;
  std::string unit;  // of the values (metrics.h)
  MetricRule rule;
  compare::SideStats baseline, candidate;
  std::optional<compare::SideStats> baseline_again;
  double change = 0;  // relative change of the medians, candidate against baseline
  compare::Interval ci;
  // Whether either side has runs whose figure never came (right-censored):
  // then p is Gehan's test and the medians, change and floor are of the
  // bounds (compare_stats.h).
  bool censored = false;
  double p = 1;           // two-sided Mann-Whitney U (Gehan's test when censored)
  double p_adjusted = 1;  // Holm-adjusted over the workload's metrics that have a direction
  double noise_floor = 0;  // max(|A against A'|, relative spread of the baseline's runs)
  compare::Verdict verdict = compare::Verdict::NoChange;
  // Whether its verdict gates the comparison's (Gate); a metric that does not
  // is reported: compared, shown, and Holm-adjusted with the other reported ones.
  bool gated = false;
  // The smallest relative change this comparison could have called a
  // regression (its threshold, noise floor and absolute floor, when the test
  // can reach alpha at all with these runs); null with the reason otherwise.
  std::optional<double> resolution;
  std::string resolution_reason;
  // --runs auto (sequential.h): regression, improvement, same or unknown, and
  // the rounds that decided it; "" and 0 for a fixed number of rounds.
  std::string decision;
  int rounds_needed = 0;
  // The change within rounds (compare_stats.h, paired_change): the candidate of
  // each round against the geometric mean of that round's A and A'. Null with
  // the reason when the runs were not made in rounds, a round lacks a side, a
  // value never came or is not positive.
  std::optional<compare::PairedChange> paired;
  std::string paired_reason;
  // The noise floor of the change within rounds: how far one run moves from
  // another of the same side in the same round, the baseline run again (A')
  // against the baseline (A): 1.4826 MAD of their log ratios over sqrt(2) (one
  // run's share of the ratio of two), as a relative change. Null without A',
  // with fewer than 3 rounds of both, or where `paired` is null.
  std::optional<double> paired_noise_floor;
};

struct WorkloadComparison {
  std::string workload;
  Json params;
  std::vector<MetricComparison> metrics;
};

struct Comparison {
  std::string baseline, candidate;  // the pins as named, or the commands as given
  // Two commands compared under one allocator (compare --baseline-command):
  // that allocator; "" for two pins.
  std::string allocator;
  int rounds = 0;                   // the fewest runs any role (A, B or A') had
  // The fewest runs the test had on each side (the baseline's are A and A'
  // together), and whether every workload had as many A, B and A' runs: a
  // comparison that ran rounds, rather than two reports whose baseline was split.
  int baseline_runs = 0, candidate_runs = 0;
  bool in_rounds = true;
  double alpha = 0.05;
  std::vector<std::string> warnings;
  std::vector<WorkloadComparison> workloads;
  int failed_runs = 0;
  // Why the comparison did not finish (a run failed, it was stopped); "" when
  // it did. An incomplete comparison's verdict is INCOMPLETE, never "no regression".
  std::string incomplete;
  std::string gate = "declared";  // gate_name of the Gate it was judged by
  // --runs auto: the rounds the rule looks at, and the alpha each look spends.
  std::vector<int> looks;
  double alpha_look = 0;
  // A gated metric regressed.
  bool regressed() const;
};

// Exit codes of a comparison: none of its gated metrics regressed, one did, or
// it is incomplete (stopped by a signal: 128 + the signal instead).
inline constexpr int kExitNoRegression = 0;
inline constexpr int kExitRegression = 1;
inline constexpr int kExitIncomplete = 4;
int exit_code(const Comparison& c);

struct CompareSettings {
  double alpha = 0.05;
  int resamples = 2000;
  uint64_t seed = 1;  // of the bootstrap
  // The runs were made in rounds (A, B and A' of round k together, repetition
  // k), as a comparison or a bisect step makes them: each metric also gets its
  // change within rounds (MetricComparison::paired). False for two plain reports.
  bool paired_rounds = true;
  Gate gate;
  GatedMetrics gated;  // each workload's declared set; a workload not in it has default_gated_metrics()
};

// "5 rounds", "6 runs a side" or "10 baseline and 4 candidate runs": how many
// runs the comparison had, as every output says it.
std::string sample_size(const Comparison& c);

// Runs must carry roles. The workloads' declared metrics, if any.
Comparison analyze(const std::vector<RunRecord>& runs, const Thresholds& t, const CompareSettings& s,
                   const DeclaredMetrics& declared = {});

}  // namespace mh
