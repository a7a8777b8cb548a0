// Containment of the processes the harness starts (see containment.h).
#include "sys/containment.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <thread>

#include "sys/cgroup.h"
#include "sys/interrupt.h"
#include "sys/process_tree.h"
#include "sys/procfs.h"

namespace mh {

namespace {

// The process-wide part: the way chosen once, the live containments, the
// harness's own unreaped children, and (subreaper) the processes
// --leftovers allow left running, which later sweeps must not take for a
// new run's.
struct State {
  bool configured = false;
  ContainmentWay way = ContainmentWay::Subreaper;
  std::vector<Containment*> live;
  std::set<pid_t> children, allowed;
};

State& state() {
  static State s;
  return s;
}

const char* controller_of(ContainmentWay way) { return way == ContainmentWay::FreezerV1 ? "freezer" : ""; }

// Whether a group can be made, killed and removed under our own in the
// hierarchy of `way`; "" or why not.
std::string probe(ContainmentWay way) {
  const std::string parent = cgroup::own_dir(controller_of(way));
  if (parent.empty()) return way == ContainmentWay::CgroupV2 ? "no cgroup v2 hierarchy is mounted" : "no v1 freezer is mounted";
  const std::string dir = parent + "/memharness-probe-" + std::to_string(getpid());
  std::string error;
  if (!cgroup::make(dir, error)) return error;
  const char* needed = way == ContainmentWay::CgroupV2 ? "/cgroup.kill" : "/freezer.state";
  if (access((dir + needed).c_str(), W_OK) != 0) error = dir + needed + ": " + std::strerror(errno);
  else if (access((parent + "/cgroup.procs").c_str(), W_OK) != 0)
    error = "cannot move processes out of " + parent + ": " + std::strerror(errno);
  cgroup::remove(dir, 0);
  return error;
}

// The best cgroup way, or "" with why_not said.
std::optional<ContainmentWay> cgroup_way(std::string& why_not) {
  for (ContainmentWay way : {ContainmentWay::CgroupV2, ContainmentWay::FreezerV1}) {
    const std::string why = probe(way);
    if (why.empty()) return way;
    why_not += (why_not.empty() ? "" : "; ") + why;
  }
  return std::nullopt;
}

void become_subreaper() {
  state().way = ContainmentWay::Subreaper;
  prctl(PR_SET_CHILD_SUBREAPER, 1);
}

// A zombie (or a process already gone) is no longer running.
bool running(pid_t pid) {
  auto text = procfs::read_text("/proc/" + std::to_string(pid) + "/stat");
  auto st = text ? procfs::parse_stat(*text) : std::nullopt;
  return st && st->state != 'Z' && st->state != 'X';
}

// With the subreaper: the children of the harness it did not start, which it
// reaps when they are zombies; --leftovers allow's are left out.
std::vector<pid_t> adopted_children() {
  std::vector<pid_t> out;
  for (pid_t pid : procfs::Descendants(getpid()).children_of(getpid())) {
    if (state().children.count(pid)) continue;
    if (!running(pid)) {
      waitpid(pid, nullptr, WNOHANG);
      state().allowed.erase(pid);
    } else if (!state().allowed.count(pid)) {
      out.push_back(pid);
    }
  }
  return out;
}

ContainmentWay configured_way();

}  // namespace

namespace containment {

std::string configure(const char* asked) {
  const std::string value = asked ? asked : "";
  state().configured = true;
  std::string why_not;
  if (value == "subreaper") {
    become_subreaper();
  } else if (value == "cgroup") {
    auto way = cgroup_way(why_not);
    if (!way) return "MEMHARNESS_CONTAINMENT=cgroup: no cgroup can be made here (" + why_not + ")";
    state().way = *way;
  } else if (value.empty() || value == "auto") {
    if (auto way = cgroup_way(why_not)) state().way = *way;
    else become_subreaper();
  } else {
    become_subreaper();
    return "MEMHARNESS_CONTAINMENT=" + value + " is not one of auto, cgroup, subreaper";
  }
  return "";
}

std::string description() {
  switch (configured_way()) {
    case ContainmentWay::CgroupV2: return "cgroup v2 cgroup.kill";
    case ContainmentWay::FreezerV1: return "cgroup v1 freezer";
    case ContainmentWay::Subreaper: break;
  }
  return "child subreaper";
}

void kill_all_live() {
  for (Containment* c : state().live) c->kill();
}

std::string unique_name(const std::string& what) {
  static int serial = 0;  // main thread only
  return "memharness-" + std::to_string(getpid()) + "-" + what + "-" + std::to_string(++serial);
}

void note_child(pid_t pid, bool alive) {
  if (alive) state().children.insert(pid);
  else state().children.erase(pid);
}

}  // namespace containment

namespace {

ContainmentWay configured_way() {
  if (!state().configured) containment::configure(std::getenv("MEMHARNESS_CONTAINMENT"));
  return state().way;
}

}  // namespace

Containment::Containment(const std::string& name) : Containment(name, configured_way()) {}

Containment::Containment(const std::string& name, ContainmentWay way) : way_(way) {
  if (way_ != ContainmentWay::Subreaper) {
    std::string ignored;
    dir_ = cgroup::own_dir(controller_of(way_)) + "/" + name;
    // A group that cannot be made here (a limit on their number): this
    // containment falls back to the subreaper.
    if (!cgroup::make(dir_, ignored)) dir_.clear();
  }
  if (dir_.empty()) {
    way_ = ContainmentWay::Subreaper;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
  } else {
    exit_slot_ = interrupt::kill_cgroup_on_exit(dir_, way_ == ContainmentWay::CgroupV2);
  }
  state().live.push_back(this);
}

Containment::~Containment() {
  interrupt::forget_cgroup(exit_slot_);
  if (!released_) kill();
  if (!dir_.empty()) cgroup::remove(dir_, kContainmentKillWaitS);
  auto& live = state().live;
  live.erase(std::remove(live.begin(), live.end(), this), live.end());
}

bool Containment::add(pid_t root, std::string& error) {
  root_ = root;
  return dir_.empty() || cgroup::add(dir_, root, error);
}

// The root is ours until Child reaps it: its pid cannot be reused before.
bool Containment::root_alive() const { return root_ > 0 && state().children.count(root_) && running(root_); }

std::vector<pid_t> Containment::live_pids() const {
  std::vector<pid_t> out;
  if (!dir_.empty()) {
    for (pid_t pid : cgroup::procs(dir_))
      if (pid != root_) out.push_back(pid);
    return out;
  }
  const procfs::Descendants tree(getpid());
  std::vector<pid_t> tops = adopted_children();
  if (root_alive()) tops.push_back(root_);
  for (pid_t top : tops) {
    if (top != root_) out.push_back(top);
    for (pid_t pid : tree.of(top))
      if (running(pid)) out.push_back(pid);
  }
  return out;
}

std::vector<LeftoverProcess> Containment::members() const {
  std::vector<LeftoverProcess> out;
  for (pid_t pid : live_pids())
    if (auto p = procfs::describe_process(pid); !p.comm.empty()) out.push_back(std::move(p));
  return out;
}

void Containment::kill() {
  std::string ignored;
  if (way_ == ContainmentWay::CgroupV2) cgroup::kill_v2(dir_, ignored);
  if (way_ == ContainmentWay::FreezerV1) cgroup::kill_frozen_v1(dir_, ignored);
  if (way_ == ContainmentWay::Subreaper) kill_adopted();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kContainmentKillWaitS);
  while (!live_pids().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (way_ == ContainmentWay::Subreaper) kill_adopted();
  }
}

// Without a group nothing stops a fork racing the kill: each round kills
// what it finds (the root too), and what the killed leave is adopted and
// found by the next.
void Containment::kill_adopted() {
  if (root_alive()) ::kill(root_, SIGKILL);
  for (pid_t pid : live_pids()) ::kill(pid, SIGKILL);
  adopted_children();  // reaps the adopted ones that died
}

void Containment::release() {
  released_ = true;
  if (dir_.empty()) {
    for (pid_t pid : live_pids()) state().allowed.insert(pid);
    return;
  }
  // Out of the group into ours, so that the group can go.
  std::string ignored;
  const std::string own = cgroup::own_dir(controller_of(way_));
  for (pid_t pid : cgroup::procs(dir_)) cgroup::add(own, pid, ignored);
}

}  // namespace mh
