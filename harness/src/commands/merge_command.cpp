// The merge command: joins reports (the shards of a job matrix, or runs of other
// allocators or workloads made apart) into one, with the summary computed again
// over all runs. It refuses what would mix in a summary without a word: a run
// given twice, a workload under other parameters, reports of other plans.
#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "commands/commands.h"
#include "report/report_read.h"
#include "commands/execute.h"
#include "sys/output_file.h"

namespace mh {

namespace {

constexpr const char* kWho = "harness merge";

struct Input {
  std::string path;
  ReportData report;
};

std::string describe_params(const Json& params) {
  std::string out;
  for (const auto& [k, v] : params.items()) {
    if (!out.empty()) out += ' ';
    out += "--" + k + "=" + (v.is_string() ? v.get<std::string>() : json_text(v));
  }
  return out;
}

// "" when the inputs can be merged, else what clashes.
std::string find_clash(const std::vector<Input>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (fs::equivalent(inputs[i].path, inputs[j].path, ec))
        return inputs[i].path + " is given twice (as " + inputs[j].path + " and " + inputs[i].path + ")";

  // The shards of one job matrix share their suite, and in a comparison their pins.
  auto plan_of = [](const Input& in) {
    Json plan = in.report.context.value("plan", Json::object()), out = Json::object();
    for (const char* k : {"suite", "baseline", "candidate"})
      if (plan.contains(k)) out[k] = plan[k];
    return out;
  };
  const Json first_plan = plan_of(inputs[0]);
  for (const auto& in : inputs)
    if (plan_of(in) != first_plan)
      return in.path + " was made with another plan than " + inputs[0].path + " (" + json_text(plan_of(in)) + " against " +
             json_text(first_plan) + "); merge joins the shards of one suite or comparison, or plain runs";

  // A run is one repetition of a workload, with its parameters, under an allocator in a role.
  std::map<std::string, std::string> seen;
  // Outside a suite a workload's runs are summarised together, so their parameters must agree.
  std::map<std::string, std::pair<Json, std::string>> params_of;
  const bool suite = !first_plan.value("suite", std::string()).empty();
  for (const auto& in : inputs)
    for (const auto& r : in.report.runs) {
      if (auto [it, fresh] = seen.emplace(run_key(r), in.path); !fresh)
        return fmt::format("{} and {} both hold repetition {} of {} under {}{} with the same parameters: the same runs "
                           "twice",
                           it->second, in.path, r.repetition, r.workload, r.allocator.name,
                           r.role.empty() ? "" : " as " + r.role);
      if (suite) continue;
      auto [it, fresh] = params_of.emplace(r.workload, std::pair{r.params, in.path});
      if (!fresh && it->second.first != r.params)
        return fmt::format("{} runs {} with {}, {} with {}: runs of other parameters would be summarised together",
                           it->second.second, r.workload, describe_params(it->second.first), in.path,
                           describe_params(r.params));
    }
  return "";
}

}  // namespace

int merge_command(const Options& o) {
  if (auto e = output_file::check_target(o.out); !e.empty()) return bad_input(kWho, "-o: " + e);
  std::vector<Input> inputs;
  for (const auto& path : o.inputs) {
    std::string error;
    auto report = read_report(path, error);
    if (!report) return bad_input(kWho, error);
    inputs.push_back({path, std::move(*report)});
  }
  if (auto clash = find_clash(inputs); !clash.empty()) return bad_input(kWho, clash);
  std::vector<RunRecord> runs;
  Json contexts = Json::array();
  for (auto& in : inputs) {
    contexts.push_back(in.report.context);
    for (auto& r : in.report.runs) runs.push_back(std::move(r));
  }
  Json context = contexts[0];
  context["merged_from"] = contexts;
  if (auto e = output_file::write_atomic(o.out, report_text(context, runs, true)); !e.empty()) {
    fmt::print(stderr, "{}: {}\n", kWho, e);
    return 2;
  }
  fmt::print(o.out == output_file::kStdout ? stderr : stdout, "merged {} runs from {} reports into {}\n", runs.size(), o.inputs.size(), o.out);
  return 0;
}

}  // namespace mh
