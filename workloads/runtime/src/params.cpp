// Workload parameter parsing and description. Pure functions over the spec.
#include "mhwl/params.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace mhwl {

namespace {

const char* type_name(ParamType t) {
  switch (t) {
    case ParamType::Int: return "int";
    case ParamType::Size: return "size";
    case ParamType::Double: return "double";
    case ParamType::Bool: return "bool";
    case ParamType::Choice: return "choice";
    case ParamType::String: return "string";
  }
  return "?";
}

std::string valid_names(const WorkloadSpec& spec) {
  std::string out;
  for (const auto& p : spec.params) out += (out.empty() ? "--" : ", --") + p.name;
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

const ParamSpec smoke_spec{"smoke", ParamType::Bool, "false", "", 0, -1, {},
                           "run a small, fast version (for tests)"};

}  // namespace

bool parse_size(const std::string& text, double& bytes) {
  if (text.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(v) || v < 0) return false;
  std::string suffix(end);
  double mult = 1;
  if (suffix == "" || suffix == "B") mult = 1;
  else if (suffix == "K" || suffix == "k" || suffix == "KiB") mult = 1024.0;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB") mult = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB") mult = 1024.0 * 1024 * 1024;
  else return false;
  bytes = std::floor(v * mult);
  return true;
}

struct ParamParser {
  static bool set(const ParamSpec& p, const std::string& text, Params& out, std::string& error) {
    auto bad = [&](const std::string& why) {
      error = "bad value '" + text + "' for --" + p.name + ": " + why;
      return false;
    };
    auto in_range = [&](double v) {
      if (p.min <= p.max && (v < p.min || v > p.max)) {
        std::ostringstream s;
        s << "must be between " << p.min << " and " << p.max;
        return bad(s.str());
      }
      return true;
    };
    switch (p.type) {
      case ParamType::Int: {
        char* end = nullptr;
        long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0') return bad("expected an integer");
        if (!in_range(static_cast<double>(v))) return false;
        out.values_[p.name] = v;
        return true;
      }
      case ParamType::Size: {
        double v = 0;
        if (!parse_size(text, v)) return bad("expected a size such as 4096, 256K, 1.5M or 2G");
        if (!in_range(v)) return false;
        out.values_[p.name] = static_cast<int64_t>(v);
        return true;
      }
      case ParamType::Double: {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v)) return bad("expected a number");
        if (!in_range(v)) return false;
        out.values_[p.name] = v;
        return true;
      }
      case ParamType::Bool:
        if (text == "true" || text == "1" || text == "yes") out.values_[p.name] = true;
        else if (text == "false" || text == "0" || text == "no") out.values_[p.name] = false;
        else return bad("expected true or false");
        return true;
      case ParamType::Choice:
        for (const auto& c : p.choices)
          if (c == text) {
            out.values_[p.name] = text;
            return true;
          }
        return bad("valid choices: " + join(p.choices));
      case ParamType::String:
        out.values_[p.name] = text;
        return true;
    }
    return bad("unknown type");
  }
};

bool parse_params(const WorkloadSpec& spec, const std::vector<std::string>& args, Params& out,
                  std::string& error) {
  std::vector<const ParamSpec*> all;
  all.push_back(&smoke_spec);
  for (const auto& p : spec.params) all.push_back(&p);
  auto find = [&](const std::string& name) -> const ParamSpec* {
    for (auto* p : all)
      if (p->name == name) return p;
    return nullptr;
  };

  std::map<std::string, std::string> given;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) {
      error = "unexpected argument '" + a + "' for workload " + spec.name +
              "; its parameters are: --smoke, " + valid_names(spec);
      return false;
    }
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const ParamSpec* p = find(name);
    if (!p) {
      error = "unknown parameter '--" + name + "' for workload " + spec.name +
              "; its parameters are: --smoke, " + valid_names(spec);
      return false;
    }
    if (!has_value) {
      if (p->type == ParamType::Bool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        error = "parameter --" + name + " of workload " + spec.name + " needs a value";
        return false;
      }
    }
    given[name] = value;
  }

  Params resolved;
  const bool smoke = given.count("smoke") ? (given["smoke"] == "true" || given["smoke"] == "1" ||
                                             given["smoke"] == "yes")
                                          : false;
  for (auto* p : all) {
    auto it = given.find(p->name);
    std::string text = it != given.end() ? it->second
                       : (smoke && !p->smoke.empty()) ? p->smoke
                                                      : p->def;
    if (!ParamParser::set(*p, text, resolved, error)) return false;
  }
  out = std::move(resolved);
  return true;
}

nlohmann::ordered_json describe(const WorkloadSpec& spec) {
  nlohmann::ordered_json params = nlohmann::ordered_json::array();
  for (const auto& p : spec.params) {
    nlohmann::ordered_json j{{"name", p.name}, {"type", type_name(p.type)}, {"default", p.def}};
    if (!p.smoke.empty()) j["smoke"] = p.smoke;
    if (p.min <= p.max) j["range"] = {p.min, p.max};
    if (!p.choices.empty()) j["choices"] = p.choices;
    j["help"] = p.help;
    params.push_back(std::move(j));
  }
  nlohmann::ordered_json metrics = nlohmann::ordered_json::array();
  for (const auto& m : spec.metrics) {
    metrics.push_back({{"name", m.name}, {"unit", m.unit}, {"better", m.better}, {"help", m.help}});
    if (!m.column.empty()) metrics.back()["column"] = m.column;
  }
  nlohmann::ordered_json curve_columns = nlohmann::ordered_json::array();
  for (const auto& c : spec.curve_columns) curve_columns.push_back({{"metric", c.metric}, {"column", c.column}});
  return {{"name", spec.name},     {"summary", spec.summary},   {"seed", spec.seed},
          {"params", params},      {"metrics", metrics},        {"after_mark", spec.after_mark},
          {"curve_columns", curve_columns}, {"gate", spec.gate}};
}

int64_t Params::integer(const std::string& name) const { return values_.at(name).get<int64_t>(); }
double Params::number(const std::string& name) const { return values_.at(name).get<double>(); }
bool Params::flag(const std::string& name) const { return values_.at(name).get<bool>(); }
const std::string& Params::text(const std::string& name) const {
  return values_.at(name).get_ref<const std::string&>();
}

}  // namespace mhwl
