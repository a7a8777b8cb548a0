// Rounds added look by look (see looks.h).
#include "commands/looks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "compare/sequential.h"
#include "inputs/plan.h"

namespace mh {

std::vector<PlannedRun> rounds_up_to(const std::vector<PlannedRun>& full, int last) {
  std::vector<PlannedRun> out;
  for (const auto& p : full)
    if (p.repetition <= last) out.push_back(p);
  return out;
}

void run_looks(const LookSettings& o, const Thresholds& t, const DeclaredMetrics& declared, Execution& e,
               const std::vector<PlannedRun>& full, std::vector<RunRecord>& runs, ExecutionOutcome& outcome) {
  const std::vector<int> looks = compare::looks_up_to(o.max_runs);
  CompareSettings settings;
  settings.alpha = o.alpha;
  settings.resamples = 0;  // the decisions need no interval
  settings.gated = gated_by_jobs(e.jobs);  // the workloads' own gated sets, as the final analysis has them
  for (size_t k = 0; k + 1 < looks.size(); ++k) {
    if (!outcome.complete || outcome.stop_signal || !outcome.error.empty()) return;
    Comparison c = analyze(runs, t, settings, declared);
    const std::vector<std::string> more = compare::apply_sequential(c, runs, looks, o.alpha);
    if (more.empty()) return;
    if (!o.quiet)
      fmt::print(stderr, "{} rounds left {} undecided: {} rounds\n", looks[k], fmt::join(more, ", "), looks[k + 1]);
    for (const auto& p : full)
      if (p.repetition > looks[k] && p.repetition <= looks[k + 1] &&
          std::find(more.begin(), more.end(), e.jobs[p.job].workload.name) != more.end())
        e.plan.push_back(p);
    e.kept = std::move(runs);
    runs.clear();
    outcome = execute(e, runs);
  }
}

}  // namespace mh
