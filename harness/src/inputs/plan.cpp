// Plans, suites and shards (see plan.h).
#include "inputs/plan.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>

namespace mh {

DeclaredMetrics declared_by_jobs(const std::vector<Job>& jobs) {
  DeclaredMetrics out;
  for (const auto& job : jobs) out[job.workload.name] = declared_metric_specs(job.workload);
  return out;
}

Json leave_out_unsupported(const std::vector<Job>& jobs, const std::vector<Arm>& arms, std::vector<PlannedRun>& plan) {
  auto why = [&](const PlannedRun& r) -> const std::string* {
    const auto& p = jobs[r.job].program;
    if (!p) return nullptr;
    auto it = p->not_under.find(arms[r.arm].allocator.family);
    return it == p->not_under.end() ? nullptr : &it->second;
  };
  Json out = Json::array();
  std::vector<PlannedRun> kept;
  for (const auto& r : plan) {
    if (const std::string* w = why(r)) {
      Json left{{"workload", jobs[r.job].workload.name}, {"allocator", arms[r.arm].allocator.label}, {"why", *w}};
      if (std::find(out.begin(), out.end(), left) == out.end()) out.push_back(left);
    } else {
      kept.push_back(r);
    }
  }
  plan = std::move(kept);
  return out;
}

std::vector<PlannedRun> interleave(size_t jobs, size_t arms, int rounds, std::optional<uint64_t> shuffle_seed) {
  std::vector<PlannedRun> out;
  std::mt19937_64 rng(shuffle_seed.value_or(0));
  for (int round = 1; round <= rounds; ++round)
    for (size_t j = 0; j < jobs; ++j) {
      std::vector<size_t> order(arms);
      for (size_t a = 0; a < arms; ++a) order[a] = a;
      if (shuffle_seed)
        // Fisher-Yates with a plain modulo draw: the same order from the same
        // seed with any standard library.
        for (size_t i = arms; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
      for (size_t a : order) out.push_back(PlannedRun{j, a, round});
    }
  return out;
}

std::optional<std::vector<SuiteEntry>> load_suite(const std::string& path, const std::string& name, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read the suites file " + path;
    return std::nullopt;
  }
  Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.contains("suites") || !j["suites"].is_object()) {
    error = "the suites file " + path + " is not valid (expected {\"suites\": {...}})";
    return std::nullopt;
  }
  if (!j["suites"].contains(name)) {
    std::string names;
    for (const auto& [k, v] : j["suites"].items()) names += (names.empty() ? "" : ", ") + k;
    error = "unknown suite '" + name + "'; valid: " + names;
    return std::nullopt;
  }
  std::vector<SuiteEntry> out;
  for (const auto& e : j["suites"][name].value("runs", Json::array())) {
    SuiteEntry s;
    if (e.contains("command")) {
      s.command = e;
      out.push_back(std::move(s));
      continue;
    }
    s.workload = e.value("workload", "");
    s.name = e.value("name", "");
    for (const auto& a : e.value("args", Json::array())) s.args.push_back(a.get<std::string>());
    out.push_back(std::move(s));
  }
  if (out.empty()) {
    error = "suite '" + name + "' in " + path + " has no runs";
    return std::nullopt;
  }
  return out;
}

std::optional<Shard> parse_shard(const std::string& text, std::string& error) {
  Shard s;
  char slash = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &s.index, &slash, &s.count, &extra) != 3 || slash != '/' || s.count < 1 ||
      s.index < 1 || s.index > s.count) {
    error = "bad shard '" + text + "': expected I/N with 1 <= I <= N, e.g. 2/4";
    return std::nullopt;
  }
  return s;
}

}  // namespace mh
