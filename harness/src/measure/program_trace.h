// A program traced with ptrace at both ends of its life. At its entry point
// (after the dynamic loader has mapped every library, the preload among them,
// and run their constructors; before the program's first instruction) its
// memory map says which allocator it got and a first sample can be taken, even
// of a program that lives a millisecond (/bin/true). At its exit stop
// (PTRACE_EVENT_EXIT, before the kernel takes its memory away) a last sample
// and its VmHWM give its exact peak, which sampling alone misses when the
// program grows in its last interval. In between every signal it receives
// stops it until the harness passes the signal on, so the sampler services the
// trace as soon as child_signal_fd() (sys/child_signal.h) is readable. Main thread only (the harness
// starts no threads): ptrace answers only the thread that attached.
#pragma once

#include <sys/types.h>

#include <string>

namespace mh {

class ProgramTrace {
 public:
  // Attaches to `pid`, a child held before its exec (Child::start_paused).
  // False, with the reason, when ptrace is not allowed here.
  bool attach(pid_t pid, std::string& why);
  // After the exec was released: runs the child to its entry point and keeps
  // it there (still traced: its maps can be read). False, with the reason,
  // when it exited on the way (the loader failed) or the breakpoint could not
  // be placed; the child is then detached and running, or gone.
  bool run_to_entry(std::string& why);
  // Held at its entry: stays traced to its exit stop (true), or, when the trace
  // cannot go on, is detached and left stopped by SIGSTOP (false, with why).
  bool follow_to_exit(std::string& why);
  // Held at its entry: detached and left stopped by SIGSTOP, untraced from now.
  void leave_at_entry();
  // Lets a program held at its entry go on (traced or not).
  void release();

  // Traced to its exit and not yet let go.
  bool following() const { return following_; }
  // Passes on every stop pending without blocking: signals are delivered, a
  // stop signal keeps the program stopped as it would untraced. True when the
  // program is held at its exit stop, where it stays until let_exit().
  bool service();
  // Lets a program held at its exit stop die, untraced.
  void let_exit();
  // True once the program has taken more than kSignalHeavy signals within a
  // second: each is a round trip through the harness (about 0.2 ms on a VM),
  // so the trace is given up for such a program rather than slow it down.
  bool signal_heavy() const { return signal_heavy_; }
  static constexpr int kSignalHeavy = 50;
  // Lets a traced program go on untraced, so that the harness can signal it
  // and wait for it like any child: interrupts it (at most `limit_ms` for the
  // stop), delivering a signal it was stopped with. Nothing when not traced.
  void detach(int limit_ms = 1000);

 private:
  pid_t pid_ = -1;
  bool attached_ = false;   // traced, any state
  bool following_ = false;  // traced beyond the entry, to the exit stop
  bool held_ = false;       // held at the entry, not yet released
  bool at_exit_ = false;
  bool signal_heavy_ = false;
  int window_signals_ = 0;  // signals passed on since window_start_ms_
  double window_start_ms_ = -1;
  void count_signal();
};

}  // namespace mh
