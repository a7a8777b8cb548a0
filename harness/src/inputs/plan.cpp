// Plans, suites and shards (see plan.h).
#include "inputs/plan.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>

#include "sys/json_read.h"

namespace mh {

DeclaredMetrics declared_by_jobs(const std::vector<Job>& jobs) {
  DeclaredMetrics out;
  for (const auto& job : jobs) out[job.workload.name] = declared_metric_specs(job.workload);
  return out;
}

GatedMetrics gated_by_jobs(const std::vector<Job>& jobs) {
  GatedMetrics out;
  for (const auto& job : jobs) out[job.workload.name] = gated_metrics(job.workload);
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

uint64_t round_seed(std::optional<uint64_t> seed, int round) {
  // splitmix64 of the base and the round: neighbouring rounds get unrelated seeds.
  uint64_t z = seed.value_or(0x6a09e667f3bcc908ull) + uint64_t(round) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
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

namespace {

std::vector<SuiteEntry> suite_from(const JsonIn& suite) {
  std::vector<SuiteEntry> out;
  if (auto runs = suite.find("runs"))
    runs->each_element([&](const JsonIn& e) {
      SuiteEntry s;
      // A command entry is checked key by key where it is read (program.h).
      s.ledger = e.boolean_or("ledger", false);
      if (e.has("command")) {
        s.command = e.json();
        s.command.erase("ledger");
        out.push_back(std::move(s));
        return;
      }
      s.workload = e.string_or("workload", "");
      s.name = e.string_or("name", "");
      if (auto args = e.find("args")) args->each_element([&](const JsonIn& a) { s.args.push_back(a.string()); });
      out.push_back(std::move(s));
    });
  return out;
}

}  // namespace

std::optional<std::vector<SuiteEntry>> load_suite(const std::string& path, const std::string& name, std::string& error) {
  auto j = read_json_file(path, kFileLimits, error);
  if (!j) {
    error = "the suites file " + error;
    return std::nullopt;
  }
  auto out = read_checked<std::vector<SuiteEntry>>(
      [&]() -> std::vector<SuiteEntry> {
        const JsonIn file(*j, path);
        const JsonIn suites = file.at("suites");
        if (auto suite = suites.find(name)) return suite_from(*suite);
        std::string names;
        suites.each_member([&](const std::string& k, const JsonIn&) { names += (names.empty() ? "" : ", ") + k; });
        throw JsonError("unknown suite '" + name + "'; valid: " + names);
      },
      error);
  if (out && out->empty()) {
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
