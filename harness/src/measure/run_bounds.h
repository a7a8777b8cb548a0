// What a run keeps of what its program sends (marks, messages, call sites at
// marks), bounded by construction: a cap per run, shrunk for a plan of many
// runs so that the report stays within what its reader takes, and a tally of
// what was dropped past it (the run's `dropped`). One run's state, on the
// sampler's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "core/record.h"
#include "measure/run_settings.h"

namespace mh {

// The bounds of each run of a plan of `runs` runs: RunBounds's defaults, each
// scaled down by the same factor when the plan's runs at their most would pass
// kReportProgramBytes, never below the floors (docs/reports.md).
RunBounds bounds_for_plan(size_t runs);

// What the bounds let a run keep, counted as it goes. Drops are written into
// the record's `dropped` with the bound that was passed.
class RunBudget {
 public:
  RunBudget(const RunBounds& bounds, RunRecord& rec) : bounds_(bounds), rec_(rec) {}
  // A mark of this name may be kept (else it is counted as dropped).
  bool admit_mark(const std::string& name);
  // A message (metric, data, allocator, allocator_stats, error) of `bytes`
  // may be kept: what the record holds from messages stays within the budget,
  // a message that replaces an earlier one (the same metric, data key or
  // allocator statistics) counted once.
  bool admit_message(const Json& message, size_t bytes);
  // Call sites of `frames` frames at a mark may be kept.
  bool admit_sites(size_t frames);
  // Call sites read at a mark but refused (a value out of range): `why`.
  void refuse_sites(const std::string& why);

 private:
  void drop(const char* what, const std::string& why);

  const RunBounds bounds_;
  RunRecord& rec_;
  size_t marks_ = 0, frames_ = 0, message_bytes_ = 0, errors_ = 0;
  std::map<std::string, size_t> held_;  // bytes held by each replaceable message
};

}  // namespace mh
