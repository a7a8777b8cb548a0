// run_workload: the common main of every workload (see workload.h).
#include <cstdio>
#include <exception>
#include <iostream>

#include "mhwl/allocator_probe.h"
#include "mhwl/workload.h"

namespace mhwl {

ParamSpec idle_hook_param() {
  return {"idle-hook", ParamType::Choice, "none", "", 0, -1, {"none", "inline", "handoff"},
          "when to call the allocator's idle API (scav_thread_idle_start/_end) around blocking waits: "
          "none never, inline around every wait, handoff only around long waits"};
}

ParamSpec seed_param() {
  return {"seed", ParamType::Int, "42", "", 0, 9.2e18, {}, "seed of the random generator"};
}

namespace {

bool declares(const WorkloadSpec& spec, const std::string& name) {
  for (const auto& p : spec.params)
    if (p.name == name) return true;
  return false;
}

IdleHooks resolve_idle(const WorkloadSpec& spec, const Params& params, Reporter& report) {
  IdleHooks hooks;
  if (!declares(spec, "idle-hook")) return hooks;
  const std::string& mode = params.text("idle-hook");
  hooks.mode = mode == "inline" ? IdleMode::Inline : mode == "handoff" ? IdleMode::Handoff : IdleMode::None;
  hooks.api = find_idle_api();
  if (hooks.mode != IdleMode::None && !hooks.api.available())
    report.metric_null("idle_hook_calls",
                       "--idle-hook " + mode +
                           ": the allocator exports no scav_thread_idle_start/scav_thread_idle_end");
  return hooks;
}

}  // namespace

int run_workload(int argc, char** argv, const WorkloadSpec& spec, WorkloadBody body) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "--describe") {
    std::cout << describe(spec).dump(2) << "\n";
    return 0;
  }
  const bool check_only = !args.empty() && args[0] == "--check";
  if (check_only) args.erase(args.begin());

  Params params;
  std::string error;
  if (!parse_params(spec, args, params, error)) {
    std::cerr << spec.name << ": " << error << "\n";
    return 2;
  }
  if (check_only) {
    std::cout << params.json().dump() << "\n";
    return 0;
  }

  Reporter& report = Reporter::get();
  AllocatorIdentity id = probe_allocator();
  report.send({{"allocator", {{"name", id.name}, {"version", id.version}, {"library", id.library}}}});

  Context ctx{params, report, resolve_idle(spec, params, report),
              std::mt19937_64(declares(spec, "seed") ? static_cast<uint64_t>(params.integer("seed")) : 42)};
  int rc;
  try {
    rc = body(ctx);
  } catch (const std::exception& e) {
    std::cerr << spec.name << ": " << e.what() << "\n";
    rc = 1;
  }

  if (auto stats = allocator_stats()) report.send({{"allocator_stats", *stats}});
  report.send({{"hwm_kb", read_own_hwm_kb()}});
  report.mark("end");
  return rc;
}

}  // namespace mhwl
