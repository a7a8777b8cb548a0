// The settings of a run that the command line gives, declared once with their
// defaults and carried whole: the options fill one (options.h), an execution
// holds it (session.h), each run request carries it to the runner, and the
// sampler reads it. Plain data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "sys/symbolize.h"

namespace mh {

// --leftovers: what becomes of the processes a run leaves running when its
// program has ended (a daemon, a background child). Each is named in the
// run's leftover_processes whatever the choice. The names are in the order
// of the values.
enum class Leftovers { Kill, Fail, Allow };
inline constexpr const char* kLeftoversNames[] = {"kill", "fail", "allow"};

// What a run keeps of what its program sends (run_bounds.h): past each bound
// the rest is dropped and counted in the run's `dropped`. The defaults are one
// run's; a plan of many runs shrinks them (bounds_for_plan).
struct RunBounds {
  size_t marks = 10000;             // marks a run keeps
  size_t mark_name_bytes = 1024;    // a longer name drops its mark
  size_t message_bytes = 4u << 20;  // metrics, data, allocator statistics, errors held
  size_t site_frames = 65536;       // frames of the call sites kept at marks (--heap-sample)
};

struct RunSettings {
  double timeout_s = 600;     // --timeout: seconds before a run is killed (SIGTERM, then SIGKILL)
  double sample_ms = 10;      // --sample-ms: the sampling interval (the record's sampler.interval_ms)
  double smaps_ms = 0;        // --smaps-ms: smaps_rollup at most this often; 0: at marks only
  uint64_t memory_limit = 0;  // --memory-limit in bytes; 0: none (memory_group.h)
  uint64_t memory_high = 0;   // --memory-high in bytes; 0: none (cgroup v2 only)
  // --leftovers: killed and the run ok, killed and the run failed, or left running.
  Leftovers leftovers = Leftovers::Kill;
  // --after: the mark the after.* metrics are measured from ("": the
  // workload's declared idle mark, else the run's last mark; curve.h).
  std::string after_mark;
  // --ledger: every job's runs with the heap ledger (a suite entry may ask for
  // it alone with "ledger": true).
  bool ledger = false;
  // --heap-sample: the ledger's mean gap in bytes between sampled allocations
  // (call sites at every mark); 0: no sampling.
  uint64_t heap_sample = 0;
  std::optional<uint64_t> ledger_seed;  // --seed: the ledger's sampling generator
  // --symbolize-timeout, --debuginfod: how the call sites' frames are named.
  SymbolizeSettings symbolize;
  RunBounds bounds;  // not an option: set per plan (bounds_for_plan)
};

}  // namespace mh
