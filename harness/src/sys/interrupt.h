// Interruption: SIGINT, SIGTERM and SIGHUP to the harness ask it to stop. The
// first one is recorded and wakes whoever waits on wake_fd(); the runs in
// flight are then stopped, recorded as interrupted and the report written by
// the ordinary code paths, and the harness exits with 128 + that signal. A
// second one (SIGINT, SIGTERM or SIGHUP, whichever came first) kills the
// workload's process group at once and exits with 128 + the second signal
// from within the handler, whatever the harness was blocked in, after writing
// the note set_exit_note left (where the runs finished so far are).
// The handler's state is the one process-wide state of the harness: a signal
// handler has nowhere else to put it. Main thread only, except the handler.
#pragma once

#include <sys/types.h>

#include <string>

namespace mh::interrupt {

// Installs the handlers (idempotent), and ignores SIGPIPE: a closed pipe (a
// program that closed its acknowledgement descriptor, `harness --list | head`)
// is an error of that write (EPIPE), never the harness's death. Children must
// not inherit them: spawn resets every signal to its default before exec.
void install();
// 0, or the first signal that asked the harness to stop.
int requested();
// The exit code for that signal: 128 + its number (130 for SIGINT).
int exit_code();
// Readable once a stop was asked for (never drained): poll it beside the child.
int wake_fd();
// The process group a second signal kills (0: none).
void set_child_group(pid_t pgid);
// Kills the process group set_child_group named (SIGKILL), if any: what the
// harness does on its way out after an internal error.
void kill_child_group();
// A cgroup a second signal kills too, so that what left the process group
// (setsid) ends with the harness: v2 by writing its cgroup.kill, v1 by a
// SIGKILL to each process its cgroup.procs lists; then the group is removed
// (waiting up to 1 s for its processes to be gone). Returns the slot to give
// back with forget_cgroup (-1 when all 8 are taken or the path is too long).
int kill_cgroup_on_exit(const std::string& dir, bool v2);
void forget_cgroup(int slot);
// What a second signal writes to standard error before it exits ("" for
// nothing), copied here: the handler may only write it as it stands. Longer
// than 1 KiB is cut.
void set_exit_note(const std::string& note);
// For tests: forget an earlier request.
void reset();

}  // namespace mh::interrupt
