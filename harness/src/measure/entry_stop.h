// Holding a program at its entry point: after the dynamic loader has mapped
// every library (the preload among them) and run their constructors, before
// the program's own first instruction. There its memory map says which
// allocator it got, and a first sample can be taken, even of a program that
// lives a millisecond (/bin/true). Done with ptrace for the start only: the
// harness attaches before the exec, puts a breakpoint at AT_ENTRY, and detaches
// there, leaving the program stopped (SIGSTOP) until the sampler continues it.
// Main thread only (the harness starts no threads): ptrace answers only the
// thread that attached.
#pragma once

#include <sys/types.h>

#include <string>

namespace mh {

class EntryStop {
 public:
  // Attaches to `pid`, a child held before its exec (Child::start_paused).
  // False, with the reason, when ptrace is not allowed here.
  bool attach(pid_t pid, std::string& why);
  // After the exec was released: runs the child to its entry point and keeps
  // it there (still traced: its maps can be read). False, with the reason,
  // when it exited on the way (the loader failed) or the breakpoint could not
  // be placed; the child is then detached and running, or gone.
  bool run_to_entry(std::string& why);
  // Detaches from a child held at its entry, leaving it stopped (SIGSTOP).
  void leave_stopped();
  // Lets a child left stopped at its entry go on.
  void release() const;

 private:
  pid_t pid_ = -1;
  bool attached_ = false;
};

}  // namespace mh
