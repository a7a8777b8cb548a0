// The malloc/free micro benchmarks of the micro workload, registered with Google
// Benchmark under fixed names. Registration happens once, on the main thread.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace micro {

// The names as registered (before any "/threads:2" suffix Google Benchmark adds).
const std::vector<std::string>& benchmark_names();

void register_benchmarks();

// Pin each benchmark thread to one of the CPUs the process may run on (thread i to
// the i-th), or not (the default). False when the allowed CPUs cannot be read.
bool set_pinning(bool on);

// The CPUs threads are pinned to (empty without pinning).
const std::vector<int>& pin_cpus();

// Where a benchmark thread was at the end of its latest timed loop: the CPU it ran
// on and how many CPUs its affinity allowed (-1 when unknown).
struct RanOn {
  int cpu = -1;
  int allowed = -1;
};
// By benchmark name and thread index.
std::map<std::string, std::vector<RanOn>> cpus_ran_on();

}  // namespace micro
