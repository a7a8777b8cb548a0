// The merge command: joins reports (the shards of a job matrix, or runs of other
// allocators or workloads made apart) into one, with the summary computed again
// over all runs. It refuses what would mix in a summary without a word: a run
// given twice, a workload under other parameters, reports of other plans.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include "commands/commands.h"
#include "report/report_read.h"
#include "commands/execute.h"
#include "inputs/plan.h"
#include "sys/output_file.h"

namespace mh {

namespace {

constexpr const char* kWhoMerge = "harness merge";

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

// The shards given are 1..N of one N, each once ("" when no input is a shard).
std::string shard_coverage(const std::vector<Input>& inputs) {
  std::map<int, std::string> given;  // shard index -> its file
  int count = 0;
  std::string first, plain;  // the first shard's file, a file that is no shard
  for (const auto& in : inputs) {
    const std::string text = in.report.context.value("plan", Json::object()).value("shard", std::string());
    std::string error;
    auto s = text.empty() ? std::nullopt : parse_shard(text, error);
    if (!s) {
      plain = in.path;
      continue;
    }
    if (count == 0) count = s->count, first = in.path;
    if (s->count != count)
      return fmt::format("{} is shard {} while {} is one of {}: shards of other plans", in.path, text, first, count);
    if (auto [it, fresh] = given.emplace(s->index, in.path); !fresh)
      return fmt::format("shard {}/{} is given twice: {} and {}", s->index, count, it->second, in.path);
  }
  if (count > 0 && !plain.empty())
    return plain + " is not a shard while " + first + " is: merge the shards of one plan, all of them";
  std::string missing;
  for (int i = 1; i <= count; ++i)
    if (!given.count(i)) missing += fmt::format("{}{}/{}", missing.empty() ? "" : ", ", i, count);
  if (!missing.empty())
    return fmt::format("shard{} {} {} missing: the plan's runs are not all here (given {} of {})",
                       missing.find(',') == std::string::npos ? "" : "s", missing,
                       missing.find(',') == std::string::npos ? "is" : "are", given.size(), count);
  return "";
}

// Which machine, and which boot of it, made a report.
std::string machine_of(const Json& context) {
  auto text = [&](const char* k) {
    return context.contains(k) && context[k].is_string() ? context[k].get<std::string>() : std::string("?");
  };
  return fmt::format("host {}, machine-id {}, boot {}", text("host"), text("machine_id"), text("boot_id"));
}

// A comparison's runs of one workload come from one machine: its sides and
// rounds are compared with each other.
std::string mixed_machines(const std::vector<Input>& inputs, const Json& plan) {
  if (!plan.contains("baseline")) return "";
  std::map<std::string, std::pair<std::string, std::string>> where;  // workload -> machine, file
  for (const auto& in : inputs) {
    const std::string machine = machine_of(in.report.context);
    for (const auto& r : in.report.runs) {
      auto [it, fresh] = where.emplace(r.workload, std::pair{machine, in.path});
      if (!fresh && it->second.first != machine)
        return fmt::format("the comparison's runs of {} come from two machines: {} ({}) and {} ({}); its baseline and "
                           "candidate are compared fairly only on one machine (--allow-mixed-machines joins them anyway)",
                           r.workload, it->second.second, it->second.first, in.path, machine);
    }
  }
  return "";
}

// "" when the inputs can be merged, else what clashes.
std::string find_clash(const std::vector<Input>& inputs, bool allow_mixed_machines) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (fs::equivalent(inputs[i].path, inputs[j].path, ec))
        return inputs[i].path + " is given twice (as " + inputs[j].path + " and " + inputs[i].path + ")";

  // The shards of one job matrix share their suite, and in a comparison their pins.
  auto plan_of = [](const Input& in) {
    Json plan = in.report.context.value("plan", Json::object()), out = Json::object();
    for (const char* k : {"suite", "baseline", "candidate", "shard_by"})
      if (plan.contains(k)) out[k] = plan[k];
    return out;
  };
  const Json first_plan = plan_of(inputs[0]);
  for (const auto& in : inputs)
    if (plan_of(in) != first_plan)
      return in.path + " was made with another plan than " + inputs[0].path + " (" + json_text(plan_of(in)) + " against " +
             json_text(first_plan) + "); merge joins the shards of one suite or comparison, or plain runs";

  if (auto e = shard_coverage(inputs); !e.empty()) return e;
  if (auto e = allow_mixed_machines ? "" : mixed_machines(inputs, first_plan); !e.empty()) return e;

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

// Shards joined back into the order of the plan they were cut from: round by
// round, entry by entry, allocator by allocator (a comparison's sides of one
// round and entry are in one shard and keep its shuffled order). A shard I/N
// split by entry holds the suite's entries I-1, I-1+N, ...; a shard balanced
// by duration has them all.
void plan_order(std::vector<Input>& inputs, std::vector<RunRecord>& runs) {
  std::map<std::string, size_t> entry_of, arm_of;
  for (const auto& in : inputs) {
    const Json plan = in.report.context.value("plan", Json::object());
    if (plan.contains("baseline")) break;
    const Json arms = plan.value("arms", Json::array());
    for (size_t a = 0; a < arms.size(); ++a) arm_of.emplace(arms[a].value("allocator", std::string()), a);
  }
  for (const auto& in : inputs) {
    const Json plan = in.report.context.value("plan", Json::object());
    std::string error;
    auto s = parse_shard(plan.value("shard", std::string()), error);
    if (!s) return;
    const bool whole = plan.contains("shard_by");
    const Json jobs = plan.value("jobs", Json::array());
    for (size_t j = 0; j < jobs.size(); ++j)
      entry_of.emplace(jobs[j].value("workload", std::string()), whole ? j : size_t(s->index - 1) + j * size_t(s->count));
  }
  auto key = [&](const RunRecord& r) {
    auto entry = entry_of.find(r.workload);
    auto arm = arm_of.find(r.allocator.name);
    return std::tuple{r.repetition, entry == entry_of.end() ? entry_of.size() : entry->second,
                      arm == arm_of.end() ? arm_of.size() : arm->second};
  };
  std::stable_sort(runs.begin(), runs.end(), [&](const RunRecord& a, const RunRecord& b) { return key(a) < key(b); });
}

}  // namespace

int merge_command(const Options& o) {
  if (auto e = output_file::check_target(o.out); !e.empty()) return bad_input(kWhoMerge, "-o: " + e);
  std::vector<Input> inputs;
  for (const auto& path : o.inputs) {
    std::string error;
    auto report = read_report(path, error);
    if (!report) return bad_input(kWhoMerge, error);
    inputs.push_back({path, std::move(*report)});
  }
  if (auto clash = find_clash(inputs, o.allow_mixed_machines); !clash.empty()) return bad_input(kWhoMerge, clash);
  std::vector<RunRecord> runs;
  Json contexts = Json::array();
  // Each shard's manifest declares its workloads' own metrics (units,
  // directions): kept, so that the merged report reads as the shards did.
  DeclaredMetrics declared;
  for (auto& in : inputs) {
    for (auto& [w, d] : declared_from_manifest(in.report.manifest, in.report.runs)) declared[w].insert(d.begin(), d.end());
    contexts.push_back(in.report.context);
    for (auto& r : in.report.runs) runs.push_back(std::move(r));
  }
  plan_order(inputs, runs);
  Json context = contexts[0];
  // What each shard's workloads declare (the gated metrics, the headlines) is
  // the union of the shards': a comparison of the merged runs gates as each did.
  for (const char* key : {"gated", "headlines"})
    for (const auto& c : contexts)
      if (c.contains(key) && c[key].is_object() && context.contains(key) && context[key].is_object())
        for (const auto& [workload, declared] : c[key].items())
          if (!context[key].contains(workload)) context[key][workload] = declared;
  context["merged_from"] = contexts;
  if (auto e = output_file::write_atomic(o.out, report_text(context, runs, true, declared)); !e.empty()) {
    fmt::print(stderr, "{}: {}\n", kWhoMerge, e);
    return 2;
  }
  fmt::print(o.out == output_file::kStdout ? stderr : stdout, "merged {} runs from {} reports into {}\n", runs.size(), o.inputs.size(), o.out);
  return 0;
}

}  // namespace mh
