// Containment: every process the harness starts (a run's program or workload,
// its set-up and load generator, git, pin builds, a workload's --describe)
// starts in a containment of its own, so that whatever it leaves running
// (a daemon that called setsid, a background child holding no pipe) is found,
// named and killed with it. The way is chosen once for the harness process:
// a cgroup of the containment's own where the machine allows one (v2 with
// cgroup.kill; else the v1 freezer: freeze, kill every task, thaw), else the
// harness as child subreaper (PR_SET_CHILD_SUBREAPER), which adopts every
// orphan of its descendants so that it can kill and reap them. A containment
// belongs to the code that started its process, on the main thread; the list
// of live ones is process-wide, for the internal-error path.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/record.h"

namespace mh {

enum class ContainmentWay { CgroupV2, FreezerV1, Subreaper };

// The longest a containment's kill waits for its processes to be gone: the
// grace past a deadline (a set-up's --timeout) that docs/options.md states.
inline constexpr double kContainmentKillWaitS = 5;

namespace containment {

// Chooses the way for this process from MEMHARNESS_CONTAINMENT's value
// (nullptr or "" for auto): "auto" the best this machine allows, "cgroup" a
// cgroup or an error, "subreaper" the subreaper. "" or the error naming the
// bad value or why no cgroup can be made. Without a call, the first
// containment reads the variable itself, taking auto for a bad value.
std::string configure(const char* asked);
// The chosen way, as the report's context says it.
std::string description();
// Kills every process of every live containment: the harness's way out after
// an internal error.
void kill_all_live();
// A group name no other containment, of this harness or another, has:
// "memharness-PID-WHAT-N".
std::string unique_name(const std::string& what);
// Child (spawn.h) says which processes it started and has not reaped yet:
// with the subreaper, a child of the harness that is none of these is an
// orphan it adopted.
void note_child(pid_t pid, bool alive);

}  // namespace containment

class Containment {
 public:
  // A containment named `name` (unique among the harness's live ones), made
  // the process-wide way; tests choose theirs.
  explicit Containment(const std::string& name);
  Containment(const std::string& name, ContainmentWay way);
  // Kills whatever is left in it (unless released) and removes its group.
  ~Containment();
  Containment(const Containment&) = delete;
  Containment& operator=(const Containment&) = delete;

  // Takes in the process it is for (held before its exec, so that all it
  // starts is inside): its root, which the caller reaps.
  bool add(pid_t root, std::string& error);
  // The processes in it other than its root, as they are now.
  std::vector<LeftoverProcess> members() const;
  // Kills every process in it, the root included (not reaped), and returns
  // once none is left alive or after kContainmentKillWaitS.
  void kill();
  // Leaves its processes running, no longer contained (--leftovers allow).
  void release();
  ContainmentWay way() const { return way_; }

 private:
  std::vector<pid_t> live_pids() const;
  bool root_alive() const;
  void kill_adopted();

  ContainmentWay way_;
  std::string dir_;  // the group's folder (a cgroup way)
  pid_t root_ = -1;
  bool released_ = false;
  int exit_slot_ = -1;  // where a second SIGINT finds the group (interrupt.h)
};

}  // namespace mh
