// Starting workload processes: without a shell (fork + execve), in their own
// process group, with a chosen environment and inherited descriptors. A child is
// held before its exec until resume(), so that counters can be attached to it.
// Main thread only (the harness starts no threads).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/record.h"

namespace mh {

class Containment;

struct ChildSpec {
  std::string path;
  std::vector<std::string> argv;           // argv[0] included
  std::map<std::string, std::string> env;  // the complete environment
  std::vector<int> inherit_fds;            // stay open (same numbers) in the child
  int output_fd = -1;                      // stdout and stderr go here; -1 keeps ours
  int error_fd = -1;                       // stderr apart from stdout; -1: as output_fd
  uint64_t rlimit_as = 0;                  // RLIMIT_AS of the child in bytes; 0 leaves it
  int stdin_fd = -1;                       // standard input; -1 keeps ours
  std::string cwd;                         // "" keeps ours
  // Where the child starts, before its exec (containment.h); nullptr: none.
  Containment* containment = nullptr;
};

class Child {
 public:
  // Forks; the child waits before execve until resume(). nullopt on failure.
  static std::optional<Child> start_paused(const ChildSpec& spec, std::string& error);
  Child(Child&& other) noexcept;
  ~Child();

  // Lets the child exec. False, with the reason, when the exec failed.
  bool resume(std::string& error);
  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_; }  // readable once the child has exited
  void signal_group(int sig) const;
  // Reaps the child (blocking).
  bool wait(int& status, rusage& usage);

 private:
  Child() = default;
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int go_fd_ = -1;    // write end: one byte releases the child
  int exec_fd_ = -1;  // read end: EOF when exec succeeded, else the errno
  bool reaped_ = false;
};

// The harness's environment minus everything that would choose or configure an
// allocator behind the registry's back (LD_PRELOAD, MALLOC_CONF, MIMALLOC_*, ...)
// and the credentials of a CI runner (withheld_credentials()): the environment
// of every process the harness starts (runs, load generators, pin builds,
// helpers). --env adds to it after.
std::map<std::string, std::string> clean_environment();
// The names (never the values) of the CI credentials in the harness's
// environment that clean_environment() leaves out, sorted: GITHUB_TOKEN,
// ACTIONS_ID_TOKEN_REQUEST_*, ACTIONS_RUNTIME_TOKEN, INPUT_*, CI_JOB_TOKEN,
// BUILDKITE_AGENT_ACCESS_TOKEN. The report's context names them.
std::vector<std::string> withheld_credentials();

// Time limits of the helper processes the harness runs, each stated in
// docs/options.md: a workload's --describe and --check, git, and the configure and build
// of a pin.
inline constexpr double kDescribeTimeoutS = 30;
inline constexpr double kGitTimeoutS = 120;
inline constexpr double kConfigureTimeoutS = 300;
inline constexpr double kBuildTimeoutS = 1800;

struct Captured {
  int exit_code = -1;  // -1 when it did not exit normally, or was killed
  std::string out, err;
  bool timed_out = false;  // killed (with all it started) after timeout_s
  // What it left running when it exited: killed then.
  std::vector<LeftoverProcess> leftovers;
};
// Runs argv to completion without an allocator preloaded, capturing its
// output, in a containment of its own: when it exits, whatever it started and
// left running is named and killed. The deadline is the process's, whatever
// it does with its pipes: still running after timeout_s, it is killed with
// all it started (within kContainmentKillWaitS), and so is one running when
// the harness is asked to stop. `cwd`: where it runs ("" keeps ours).
Captured run_capture(const std::vector<std::string>& argv, double timeout_s = 60, const std::string& cwd = "");

}  // namespace mh
