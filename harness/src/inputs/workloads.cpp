// Workload registry (see workloads.h).
#include "inputs/workloads.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "sys/json_read.h"
#include "sys/spawn.h"

namespace mh {

namespace {

void strings_of(const JsonIn& entry, std::initializer_list<const char*> keys) {
  for (const char* k : keys) entry.string_or(k, "");
}

// Every field the harness reads of a description, checked once here so that
// the readers below can take them as they are.
std::string checked_name(const JsonIn& d) {
  strings_of(d, {"summary", "after_mark"});
  if (auto params = d.find("params"))
    params->each_element([](const JsonIn& p) {
      strings_of(p, {"name", "help", "default", "smoke"});
      if (auto choices = p.find("choices")) choices->each_element([](const JsonIn& c) { c.string(); });
    });
  if (auto metrics = d.find("metrics"))
    metrics->each_element([](const JsonIn& m) { strings_of(m, {"name", "unit", "better", "help", "column"}); });
  if (auto curve = d.find("curve_columns"))
    curve->each_element([](const JsonIn& c) { strings_of(c, {"metric", "column"}); });
  if (auto gate = d.find("gate")) gate->each_element([](const JsonIn& g) { g.string(); });
  return d.at("name").string();
}

// A program that answers --describe with a description; anything else in
// the folder is not a workload.
std::optional<WorkloadInfo> describe_binary(const std::filesystem::path& binary) {
  auto c = run_capture({binary.string(), "--describe"}, kDescribeTimeoutS);
  if (c.exit_code != 0) return std::nullopt;
  std::string error;
  const std::string what = binary.string() + " --describe";
  auto d = parse_json(c.out, what, kFileLimits, error);
  if (!d) return std::nullopt;
  auto name = read_checked<std::string>([&] { return checked_name(JsonIn(*d, what)); }, error);
  if (!name) return std::nullopt;
  return WorkloadInfo{*name, binary.string(), std::move(*d)};
}

}  // namespace

std::vector<WorkloadInfo> list_workloads(const std::string& dir) {
  std::vector<WorkloadInfo> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (!e.is_regular_file() || access(e.path().c_str(), X_OK) != 0) continue;
    if (auto w = describe_binary(e.path())) out.push_back(std::move(*w));
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return out;
}

std::optional<WorkloadInfo> find_workload(const std::string& dir, const std::string& name) {
  auto path = std::filesystem::path(dir) / name;
  if (name.find('/') != std::string::npos || access(path.c_str(), X_OK) != 0) return std::nullopt;
  return describe_binary(path);
}

std::optional<Json> check_params(const WorkloadInfo& w, const std::vector<std::string>& args, std::string& error) {
  std::vector<std::string> argv = {w.binary, "--check"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto c = run_capture(argv, kDescribeTimeoutS);
  if (c.timed_out) {
    error = "workload " + w.name + " did not answer --check within " + fmt::format("{:g}", kDescribeTimeoutS) + " s";
    return std::nullopt;
  }
  if (c.exit_code != 0) {
    error = c.err.empty() ? "workload " + w.name + " rejected its parameters" : c.err;
    while (!error.empty() && error.back() == '\n') error.pop_back();
    return std::nullopt;
  }
  auto j = parse_json(c.out, "workload " + w.name + " --check", kFileLimits, error);
  return j;
}

std::vector<std::string> declared_metrics(const WorkloadInfo& w) {
  std::vector<std::string> out;
  for (const auto& m : w.description.value("metrics", Json::array())) out.push_back(m.value("name", ""));
  return out;
}

std::map<std::string, DeclaredMetric> declared_metric_specs(const WorkloadInfo& w) {
  std::map<std::string, DeclaredMetric> out;
  for (const auto& m : w.description.value("metrics", Json::array()))
    out[m.value("name", "")] = {m.value("unit", ""), m.value("better", ""), m.value("help", "")};
  return out;
}

std::string declared_after_mark(const WorkloadInfo& w) { return w.description.value("after_mark", ""); }

std::vector<Headline> headline_metrics(const WorkloadInfo& w) {
  std::vector<Headline> out;
  for (const auto& m : w.description.value("metrics", Json::array()))
    if (!m.value("column", "").empty())
      out.push_back({workload_metric(m.value("name", "")), m.value("column", ""), m.value("unit", ""), m.value("better", "")});
  for (const auto& c : w.description.value("curve_columns", Json::array()))
    if (const MetricSpec* spec = find_metric(c.value("metric", "")))
      out.push_back({c.value("metric", ""), c.value("column", ""), spec->unit, spec->better});
  return out;
}

std::vector<std::string> gated_metrics(const WorkloadInfo& w) {
  std::vector<std::string> out;
  for (const auto& h : headline_metrics(w))
    if (!h.better.empty() && h.better != "none") out.push_back(h.metric);
  const Json gate = w.description.value("gate", Json::array());
  if (gate.empty()) {
    for (const auto& m : default_gated_metrics())
      if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  }
  for (const auto& g : gate)
    if (std::find(out.begin(), out.end(), g.get<std::string>()) == out.end()) out.push_back(g.get<std::string>());
  return out;
}

std::string format_list(const std::vector<WorkloadInfo>& workloads) {
  std::string out;
  for (const auto& w : workloads) {
    out += fmt::format("{:<20} {}\n", w.name, w.description.value("summary", ""));
    out += fmt::format("    {:<20} {}\n", "--smoke", "a small, fast version: the smoke values below (what the tests run)");
    for (const auto& p : w.description["params"]) {
      // A choice shows its values; an empty default is explained by the help itself.
      std::string flag = "--" + p.value("name", "");
      if (p.contains("choices")) {
        std::string choices;
        for (const auto& c : p["choices"]) {
          if (!choices.empty()) choices += '|';
          choices += c.get<std::string>();
        }
        flag += " " + choices;
      }
      std::string def = p.value("default", "");
      if (p.contains("smoke")) def += ", smoke " + p["smoke"].get<std::string>();
      if (flag.size() > 20) flag += "\n" + std::string(24, ' ');  // the help goes under a long choice
      out += fmt::format("    {:<20} {}{}\n", flag, p.value("help", ""), def.empty() ? "" : " (default " + def + ")");
    }
    std::string metrics;
    for (const auto& m : w.description.value("metrics", Json::array())) {
      if (!metrics.empty()) metrics += ", ";
      metrics += m.value("name", "");
      if (m.contains("column")) metrics += " (headline)";
    }
    if (!metrics.empty()) out += "    metrics: " + metrics + "\n";
    out += "    gated in a comparison: " + fmt::format("{}", fmt::join(gated_metrics(w), ", ")) + "\n";
  }
  return out;
}

}  // namespace mh
