// perf_event_open counters on a child: opened before its exec with
// enable_on_exec and inherit, so they count the workload and every thread it
// starts, and nothing of the harness. An event the machine cannot count is
// recorded as null with the reason, never as 0. One PerfCounters per run,
// owned by the runner on the main thread (the harness starts no threads).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/record.h"

namespace mh {

class PerfCounters {
 public:
  // Opens every event on `pid`, which must not have called exec yet.
  explicit PerfCounters(int pid);
  ~PerfCounters();
  PerfCounters(const PerfCounters&) = delete;
  PerfCounters& operator=(const PerfCounters&) = delete;

  // Final values; call after the child has exited.
  std::map<std::string, Maybe> read() const;

 private:
  struct Counter {
    std::string name;
    int fd = -1;
    std::string reason;  // why fd is -1
  };
  std::vector<Counter> counters_;
};

}  // namespace mh
