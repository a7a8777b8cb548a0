// The entry point every workload uses: parameters, the allocator check, marks,
// and the closing hand-over (allocator statistics, VmHWM, the "end" mark).
//
//   int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
//
// Besides the declared parameters a workload binary answers `--describe` (its
// declaration as JSON) and `--check ARGS...` (the resolved values, or exit 2).
#pragma once

#include <cstdint>
#include <random>

#include "mhwl/idle.h"
#include "mhwl/params.h"
#include "mhwl/report.h"

namespace mhwl {

struct Context {
  const Params& params;
  Reporter& report;
  IdleHooks idle;  // from --idle-hook when the workload declares it
  std::mt19937_64 rng;  // seeded from --seed when declared, else a fixed seed
};

using WorkloadBody = int (*)(Context&);

int run_workload(int argc, char** argv, const WorkloadSpec& spec, WorkloadBody body);

// Shared parameter declarations, for workloads that use them.
ParamSpec idle_hook_param();
ParamSpec seed_param();

}  // namespace mhwl
