// Series named for people (see series_names.h).
#include "commands/series_names.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <vector>

#include "core/escape.h"
#include "inputs/workloads.h"

namespace mh {

namespace {

// A program's command words, shortened: what tells two unnamed programs apart.
std::string command_text(const Json& command) {
  std::vector<std::string> words;
  for (const auto& word : command)
    if (word.is_string()) words.push_back(word.get<std::string>());
  std::string out = fmt::format("{}", fmt::join(words, " "));
  if (out.size() > 60) {
    size_t cut = 57;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    out.replace(cut, std::string::npos, "...");
  }
  return out;
}

}  // namespace

std::string parameter_text(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (!value.is_number()) return json_text(value);
  const double v = value.get<double>();
  for (auto [scale, suffix] : {std::pair{1073741824.0, "G"}, std::pair{1048576.0, "M"}, std::pair{1024.0, "K"}})
    if (v >= scale && std::fmod(v, scale) == 0) return fmt::format("{:g}{}", v / scale, suffix);
  return fmt::format("{:g}", v);
}

const Json& SeriesNames::defaults(const std::string& workload, bool smoke) {
  auto [it, added] = defaults_.try_emplace({workload, smoke}, Json());
  if (!added) return it->second;
  if (auto w = find_workload(dir_, workload)) {
    std::string error;
    if (auto p = check_params(*w, smoke ? std::vector<std::string>{"--smoke"} : std::vector<std::string>{}, error))
      it->second = std::move(*p);
  }
  return it->second;
}

std::string SeriesNames::name(const std::string& workload, const std::string& params_json) {
  const Json params = Json::parse(params_json, nullptr, false);
  if (!params.is_object() || params.empty()) return workload;
  if (params.contains("command")) return workload + " (" + command_text(params["command"]) + ")";
  const bool smoke = params.value("smoke", false) == true;
  const Json& base = defaults(workload, smoke);
  std::string out = workload;
  for (const auto& [key, value] : params.items()) {
    if (key == "smoke") continue;
    if (base.is_object() && base.contains(key) && base[key] == value) continue;
    out += " " + key + "=" + parameter_text(value);
  }
  return smoke ? out + " smoke" : out;
}

}  // namespace mh
