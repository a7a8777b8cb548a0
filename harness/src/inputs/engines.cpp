// The engines' shard variables (see engines.h): one row per engine, each read
// into a 0-based index and a count, then checked against the others.
#include "inputs/engines.h"

#include <fmt/format.h>

#include <cstdlib>
#include <vector>

namespace mh {

namespace {

struct Found {
  std::string engine;
  long index = 0;  // 0-based
  std::optional<long> count;
  Json variables = Json::object();
  Json job = Json::object();
};

struct Engine {
  const char* name;
  const char* index;  // the variable that marks the engine present
  const char* count;  // nullptr: the engine does not say (Kubernetes)
  int base;           // the index of the first shard
  std::vector<const char*> job;  // identifiers of the job, recorded when set
  // Slurm: the index is (ID - MIN) / STEP, from the array's own variables.
  bool slurm_array = false;
};

const std::vector<Engine>& engines() {
  static const std::vector<Engine> table = {
      {"slurm", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", 0,
       {"SLURM_ARRAY_JOB_ID", "SLURM_JOB_ID", "SLURM_CLUSTER_NAME", "SLURM_JOB_NODELIST"}, true},
      {"kubernetes", "JOB_COMPLETION_INDEX", nullptr, 0, {"HOSTNAME"}},
      {"gitlab", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1, {"CI_JOB_ID", "CI_PIPELINE_ID", "CI_PROJECT_PATH"}},
      {"buildkite", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0, {"BUILDKITE_JOB_ID", "BUILDKITE_BUILD_ID"}},
      {"circleci", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0, {"CIRCLE_BUILD_NUM", "CIRCLE_WORKFLOW_ID"}},
      {"bazel", "TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS", 0, {"TEST_TARGET"}},
      {"googletest", "GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS", 0, {}},
  };
  return table;
}

// A whole non-negative number, or an error naming the variable.
std::optional<long> env_number(const EnvReader& env, const char* name, Json& variables, std::string& error) {
  auto text = env(name);
  if (!text) return std::nullopt;
  variables[name] = *text;
  char* end = nullptr;
  long v = std::strtol(text->c_str(), &end, 10);
  if (text->empty() || *end != '\0' || v < 0) {
    error = fmt::format("{}={} is not a whole number of at least 0", name, *text);
    return std::nullopt;
  }
  return v;
}

// Slurm: TASK_ID counted from TASK_MIN in steps of TASK_STEP; an array of
// other indices (--array=1,3,7) has no such count and is refused.
bool read_slurm(const EnvReader& env, Found& f, std::string& error) {
  auto id = env_number(env, "SLURM_ARRAY_TASK_ID", f.variables, error);
  auto min = env_number(env, "SLURM_ARRAY_TASK_MIN", f.variables, error);
  auto max = env_number(env, "SLURM_ARRAY_TASK_MAX", f.variables, error);
  auto step = env_number(env, "SLURM_ARRAY_TASK_STEP", f.variables, error);
  auto count = env_number(env, "SLURM_ARRAY_TASK_COUNT", f.variables, error);
  if (!error.empty()) return false;
  if (!id || !min || !max || !count) {
    error = "SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_MIN, _MAX and _COUNT";
    return false;
  }
  const long s = step.value_or(1);
  if (s < 1 || *max < *min || *count != (*max - *min) / s + 1 || (*id - *min) % s != 0 || *id < *min || *id > *max) {
    error = fmt::format("the Slurm array is not one range of equal steps ({}): --shard auto needs an array like "
                        "--array=0-{} (with %LIMIT or :STEP if you like), not a list of indices",
                        json_text(f.variables), *count > 0 ? *count - 1 : 0);
    return false;
  }
  f.index = (*id - *min) / s;
  f.count = *count;
  return true;
}

bool read_engine(const Engine& e, const EnvReader& env, Found& f, std::string& error) {
  f.engine = e.name;
  if (e.slurm_array) return read_slurm(env, f, error);
  auto index = env_number(env, e.index, f.variables, error);
  std::optional<long> count = e.count ? env_number(env, e.count, f.variables, error) : std::nullopt;
  if (!error.empty()) return false;
  if (*index < e.base) {
    error = fmt::format("{}={} is below {}, the engine's first index", e.index, *index, e.base);
    return false;
  }
  f.index = *index - e.base;
  f.count = count;
  return true;
}

std::string describe_found(const std::vector<Found>& found) {
  std::string out;
  for (const auto& f : found) out += (out.empty() ? "" : "; ") + f.engine + " " + json_text(f.variables);
  return out;
}

// auto/N or the stated count variable, when given.
std::optional<long> stated_count(const std::string& text, const EnvReader& env, Json& variables, std::string& error) {
  if (text.size() > 5) {
    char* end = nullptr;
    long n = std::strtol(text.c_str() + 5, &end, 10);
    if (*end != '\0' || n < 1) {
      error = "bad shard '" + text + "': expected auto, auto/N (N at least 1) or I/N";
      return std::nullopt;
    }
    return n;
  }
  return env_number(env, kShardCountVariable, variables, error);
}

std::string all_index_variables() {
  std::string out;
  for (const auto& e : engines()) out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", e.index, e.name);
  return out;
}

}  // namespace

EnvReader process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
}

bool is_auto_shard(const std::string& text) { return text == "auto" || text.starts_with("auto/"); }

std::optional<EngineShard> shard_from_engines(const std::string& text, const EnvReader& env, std::string& error) {
  error.clear();
  Json stated = Json::object();
  auto given = stated_count(text, env, stated, error);
  if (!error.empty()) return std::nullopt;
  std::vector<Found> found;
  for (const auto& e : engines()) {
    if (!env(e.index)) continue;
    Found f;
    if (!read_engine(e, env, f, error)) {
      error = "--shard " + text + ": " + error;
      return std::nullopt;
    }
    for (const char* id : e.job)
      if (auto v = env(id)) f.job[id] = *v;
    found.push_back(std::move(f));
  }
  if (found.empty()) {
    error = "--shard " + text + ": no engine's shard variable is set; looked for " + all_index_variables() +
            " (or give --shard I/N)";
    return std::nullopt;
  }
  for (auto& f : found)
    if (!f.count) f.count = given;
  for (const auto& f : found) {
    if (!f.count) {
      error = fmt::format("--shard {}: {} gives the index ({}) but not the count: give --shard auto/N or set {} (a "
                          "Kubernetes Indexed Job's completions)",
                          text, f.engine, json_text(f.variables), kShardCountVariable);
      return std::nullopt;
    }
    const bool disagree = f.index != found[0].index || *f.count != *found[0].count || (given && *given != *f.count);
    if (disagree || f.index >= *f.count) {
      error = fmt::format("--shard {}: the engines' variables {}: {}{}", text,
                          disagree ? "disagree" : "name an index past the count", describe_found(found),
                          given ? fmt::format("; the count given is {}", *given) : "");
      return std::nullopt;
    }
  }
  EngineShard out{Shard{int(found[0].index) + 1, int(*found[0].count)}, found[0].engine, Json::object(), Json::object(),
                  ""};
  for (const auto& f : found) {
    out.variables.update(f.variables);
    out.job.update(f.job);
  }
  out.variables.update(stated);
  for (size_t i = 1; i < found.size(); ++i) out.engine += "+" + found[i].engine;
  if (auto status = env("TEST_SHARD_STATUS_FILE")) out.status_file = *status;
  return out;
}

Json engine_shard_json(const EngineShard& s) {
  return Json{{"engine", s.engine},
              {"shard", fmt::format("{}/{}", s.shard.index, s.shard.count)},
              {"variables", s.variables},
              {"job", s.job}};
}

}  // namespace mh
