// Workload parameters: each workload declares its parameters once (name, type,
// default, range, help); the same declaration parses argv, answers --describe
// for the harness, and records the resolved values. Single-threaded use.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mhwl {

enum class ParamType { Int, Size, Double, Bool, Choice, String };

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Int;
  std::string def;    // default, in the syntax a user would type ("1.5M", "300")
  std::string smoke;  // default under --smoke; empty means the same as def
  double min = 0;     // numeric range, inclusive; ignored when min > max
  double max = -1;
  std::vector<std::string> choices;  // for Choice
  std::string help;
};

// A metric the workload reports (Reporter::metric), declared so that the
// harness can list it, check it is there, and know which way is better.
struct MetricSpec {
  std::string name;
  std::string unit;    // "ms", "KiB", "bytes", "count", "ns", ...
  std::string better;  // "lower", "higher" or "" (informational)
  std::string help;
  // The summary table's column title (the unit is added) when this is one of the
  // workload's headline figures, its result; the first one ranks the allocators.
  std::string column = "";
};

// One of the harness's own metrics (its registry: RSS curve metrics such as
// after.ms_to_90pct) shown as one of this workload's headline figures.
struct CurveColumn {
  std::string metric;
  std::string column;
};

struct WorkloadSpec {
  std::string name;
  std::string summary;
  std::string seed;  // which seed scenario it reproduces, free text
  std::vector<ParamSpec> params;
  std::vector<MetricSpec> metrics;
  // The mark after which the workload holds no more than it must (its idle or
  // settled phase): the harness measures its after.* curve metrics from here.
  std::string after_mark;
  std::vector<CurveColumn> curve_columns;
  // The harness's metrics (its registry, or this workload's own as
  // "workload.NAME") that state the workload's purpose besides its headline
  // figures: with them, a comparison's verdict is gated by these and the
  // headline figures, and reports the rest (docs/compare.md says why each
  // workload gates what it gates). Empty: the harness's default set.
  std::vector<std::string> gate = {};
};

// Resolved values. Numbers are stored as double (sizes in bytes), the rest as text.
class Params {
 public:
  int64_t integer(const std::string& name) const;
  double number(const std::string& name) const;
  bool flag(const std::string& name) const;
  const std::string& text(const std::string& name) const;
  bool smoke() const { return flag("smoke"); }
  const nlohmann::ordered_json& json() const { return values_; }

 private:
  friend struct ParamParser;
  nlohmann::ordered_json values_ = nlohmann::ordered_json::object();
};

// Parses "1.5M", "256K", "2G", "4096" into bytes; false when malformed.
bool parse_size(const std::string& text, double& bytes);

// Parses argv (without the program name) against spec. On failure returns false
// and puts a message naming the bad value and the valid choices in error.
bool parse_params(const WorkloadSpec& spec, const std::vector<std::string>& args, Params& out,
                  std::string& error);

// The declaration as JSON, for the harness (--describe).
nlohmann::ordered_json describe(const WorkloadSpec& spec);

}  // namespace mhwl
