// `--shard auto`: the shard of a job from the variables its engine sets (Slurm
// job arrays, Kubernetes Indexed Jobs, GitLab, Buildkite, CircleCI, Bazel,
// GoogleTest). One table of engines; pure apart from the environment reader given.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/record.h"
#include "inputs/plan.h"

namespace mh {

// Reads one environment variable (nullopt: not set). Tests pass a map.
using EnvReader = std::function<std::optional<std::string>(const std::string&)>;
EnvReader process_env();

// The variable that states the count where the engine does not (a Kubernetes
// Indexed Job's `completions`): `--shard auto` reads it like `auto/N`.
inline constexpr const char* kShardCountVariable = "MEMHARNESS_SHARD_COUNT";

struct EngineShard {
  Shard shard;           // 1-based, as --shard I/N
  std::string engine;    // "slurm", "kubernetes", ...
  Json variables;        // the engine's variables that were read, by name
  Json job;              // the engine's identifiers of the job (SLURM_ARRAY_JOB_ID, CI_JOB_ID, ...)
  std::string status_file;  // Bazel's TEST_SHARD_STATUS_FILE: touched to say the test shards ("" none)
};

// Whether `text` asks for the engine's shard: "auto" or "auto/N".
bool is_auto_shard(const std::string& text);

// The shard `text` ("auto" or "auto/N") names under the variables `env` reads.
// Errors (nullopt, `error` set) name the variables found: none set, a count
// missing, engines (or auto/N) that disagree, a value that is not a number or
// out of range, a Slurm array that is not contiguous.
std::optional<EngineShard> shard_from_engines(const std::string& text, const EnvReader& env, std::string& error);

// The report's record of it: {"engine", "shard": "I/N", "variables", "job"}.
Json engine_shard_json(const EngineShard& s);

}  // namespace mh
