// Any program as a workload: what `harness -- PROGRAM ARGS` (or a suite entry
// {"command": [...]}) runs, resolved and checked before anything runs. One
// declaration of the settings, read from JSON: the command line gathers its
// flags into the same JSON a suite entry holds. Pure except for the file
// system checks (PATH lookup, --cwd, --stdin). Main thread only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/record.h"

namespace mh {

struct OutputMark {
  std::string regex, name;  // a mark named `name` at every output line matching `regex`
};
struct TimedMark {
  double ms = 0;
  std::string name;
};
struct LoadMetric {
  std::string name, regex;  // the first capture group of the load generator's last matching line
};

struct Program {
  std::string name;                // in tables and reports (default: the program's base name)
  std::vector<std::string> argv;   // as given; argv[0] is looked up in PATH like execvp
  std::string path;                // what argv[0] resolved to
  std::string cwd;                 // "": the harness's
  std::vector<std::pair<std::string, std::string>> env;  // added to the environment
  std::string stdin_path;          // "": /dev/null
  int expect_exit = 0;
  std::vector<OutputMark> output_marks;
  std::vector<TimedMark> timed_marks;
  // A server under load: once ready (a line matching ready_regex, or a TCP
  // connect to 127.0.0.1:ready_port), the load generator runs; after it, the
  // program idles idle_s and is stopped (SIGTERM, SIGKILL after stop_grace_s).
  std::vector<std::string> load_argv;  // split like shell words, no shell
  std::string load_path;
  std::string ready_regex;
  int ready_port = 0;
  // ready_port "auto": each run gets a free port of its own, written where
  // the command, the load or an environment value says {port}; two runs of
  // one server at once (shards on one machine) do not meet.
  bool ready_port_auto = false;
  double ready_timeout_s = 30;
  std::optional<double> idle_s;  // set: stop the program that long after load-end (or after ready without a load)
  double stop_grace_s = 2;
  std::vector<LoadMetric> load_metrics;
  // Run to completion before each run, unmeasured, where the program will run
  // (its --cwd, else the run's temporary directory): makes the program's
  // inputs. Split like shell words, no shell, no allocator preloaded.
  std::vector<std::string> setup_argv;
  std::string setup_path;
  // Allocator families the program cannot be measured under, with why (a
  // program linked with its own allocator, which a preload overrides but
  // glibc's malloc does not): its runs under them are left out of a plan.
  std::map<std::string, std::string> not_under;
  // Each sample sums the program and its live descendants (a compiler driver
  // and its cc1plus); false: the started process only.
  bool tree = true;
  // Held at its exit stop (ptrace) for its exact peak; false: its signals do
  // not pass through the harness, and the peak is wait4's or the samples'.
  bool exit_stop = true;
  bool waits_for_ready() const { return !ready_regex.empty() || ready_port > 0 || ready_port_auto; }
};

// The keys a command is given by, in a suite entry and as gathered from the
// command line: command, name, cwd, env (["K=V"...]), stdin, expect_exit,
// mark_on_output (["REGEX[=NAME]"...]), mark_at (["MS[=NAME]"...]), load
// ("PROGRAM ARGS"), ready, ready_port, ready_timeout, idle, stop_grace,
// load_metric (["NAME=REGEX"...]), tree and exit_stop (true or false), setup ("PROGRAM ARGS"),
// not_under ({"FAMILY": "why"...}). Checks everything (the program and the load
// generator are found, regexes compile, --cwd is a folder, --stdin readable);
// nullopt with a message naming the bad value and what is valid.
std::optional<Program> program_from_json(const Json& j, std::string& error);

// The run record's params: argv, the resolved path, cwd, env, stdin and the
// marks and load settings that were given.
Json program_params(const Program& p);

// The program of one run with ready_port "auto": `port` as its ready port and
// in place of every {port} of its arguments, its load generator's and its
// environment values.
Program with_port(const Program& p, int port);

// execvp's lookup: a name with a '/' is taken as it is, else the first
// executable file of that name in PATH. "" when there is none.
std::string find_in_path(const std::string& name, const std::string& path_variable);

// Shell-like word splitting without a shell: blanks separate words, single
// and double quotes group, a backslash escapes. nullopt on an open quote.
std::optional<std::vector<std::string>> split_words(const std::string& text);

// Why the allocator cannot be put under `path` at all, or "": a static binary
// (no PT_INTERP: no loader reads LD_PRELOAD), or one the loader runs in secure
// mode (setuid or setgid to another user or group: LD_PRELOAD is ignored).
// A script ("#!") is judged by its interpreter.
std::string preload_obstacle(const std::string& path);

}  // namespace mh
