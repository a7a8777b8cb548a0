// The malloc/free micro benchmarks of the micro workload, registered with Google
// Benchmark under fixed names. Registration happens once, on the main thread.
#pragma once

#include <string>
#include <vector>

namespace micro {

// The names as registered (before any "/threads:2" suffix Google Benchmark adds).
const std::vector<std::string>& benchmark_names();

void register_benchmarks();

}  // namespace micro
