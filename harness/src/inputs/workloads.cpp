// Workload registry (see workloads.h).
#include "inputs/workloads.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "sys/spawn.h"

namespace mh {

namespace {

std::optional<WorkloadInfo> describe(const std::filesystem::path& binary) {
  auto c = run_capture({binary.string(), "--describe"}, kDescribeTimeoutS);
  if (c.exit_code != 0) return std::nullopt;
  Json d = Json::parse(c.out, nullptr, false);
  if (d.is_discarded() || !d.contains("name")) return std::nullopt;
  return WorkloadInfo{d["name"].get<std::string>(), binary.string(), d};
}

}  // namespace

std::vector<WorkloadInfo> list_workloads(const std::string& dir) {
  std::vector<WorkloadInfo> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (!e.is_regular_file() || access(e.path().c_str(), X_OK) != 0) continue;
    if (auto w = describe(e.path())) out.push_back(std::move(*w));
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return out;
}

std::optional<WorkloadInfo> find_workload(const std::string& dir, const std::string& name) {
  auto path = std::filesystem::path(dir) / name;
  if (name.find('/') != std::string::npos || access(path.c_str(), X_OK) != 0) return std::nullopt;
  return describe(path);
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
  Json j = Json::parse(c.out, nullptr, false);
  if (j.is_discarded()) {
    error = "workload " + w.name + " answered --check with something that is not JSON";
    return std::nullopt;
  }
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
  }
  return out;
}

}  // namespace mh
