// A program traced at its entry and its exit (see program_trace.h). The only
// platform-specific file of the harness: x86-64 registers and breakpoint.
#include "measure/program_trace.h"

#include <elf.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include "sys/child_signal.h"

namespace mh {

namespace {

// The program's entry point from its auxiliary vector (the loader's own entry
// is AT_BASE; AT_ENTRY is the executable's).
uint64_t entry_point(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/auxv", std::ios::binary);
  Elf64_auxv_t a{};
  while (in.read(reinterpret_cast<char*>(&a), sizeof a))
    if (a.a_type == AT_ENTRY) return a.a_un.a_val;
  return 0;
}

// The next stop of `pid`, consumed: 1 a stop (in status), 0 none yet (only
// without `block`), -1 the child exited (left for its owner to reap) or is gone.
int take_stop(pid_t pid, int& status, bool block) {
  siginfo_t info{};
  const int nohang = block ? 0 : WNOHANG;
  while (waitid(P_PID, pid, &info, WEXITED | WSTOPPED | WNOWAIT | __WALL | nohang) < 0)
    if (errno != EINTR) return -1;
  if (info.si_pid == 0) return 0;
  if (info.si_code == CLD_EXITED || info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED) return -1;
  while (waitpid(pid, &status, __WALL | nohang) < 0)
    if (errno != EINTR) return -1;
  return WIFSTOPPED(status) ? 1 : 0;
}

// Lets a stop other than ours go on, handing a signal-delivery stop its signal.
void pass_on(pid_t pid, int status) {
  const int sig = WSTOPSIG(status);
  const bool event = (status >> 16) != 0;
  ptrace(PTRACE_CONT, pid, nullptr, reinterpret_cast<void*>(intptr_t(event || sig == SIGTRAP ? 0 : sig)));
}

int event_of(int status) { return status >> 16; }

bool is_stop_signal(int sig) { return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

}  // namespace

bool ProgramTrace::attach(pid_t pid, std::string& why) {
#if defined(__x86_64__)
  if (ptrace(PTRACE_SEIZE, pid, nullptr, reinterpret_cast<void*>(intptr_t(PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT))) < 0) {
    why = std::string("ptrace: ") + std::strerror(errno);
    return false;
  }
  pid_ = pid;
  attached_ = true;
  return true;
#else
  (void)pid;
  why = "holding a program at its entry is done for x86-64 only";
  return false;
#endif
}

bool ProgramTrace::run_to_entry(std::string& why) {
#if defined(__x86_64__)
  int status = 0;
  // The exec: the new image is in place, the loader has not run yet.
  for (;;) {
    if (take_stop(pid_, status, true) != 1) {
      why = "the program exited before its exec completed";
      return false;
    }
    if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) break;
    pass_on(pid_, status);
  }
  const uint64_t entry = entry_point(pid_);
  errno = 0;
  const long word = entry ? ptrace(PTRACE_PEEKTEXT, pid_, reinterpret_cast<void*>(entry), nullptr) : 0;
  if (!entry || errno != 0 ||
      ptrace(PTRACE_POKETEXT, pid_, reinterpret_cast<void*>(entry), reinterpret_cast<void*>((word & ~0xffL) | 0xcc)) < 0) {
    why = "no breakpoint could be put at the program's entry point";
    ptrace(PTRACE_DETACH, pid_, nullptr, nullptr);
    attached_ = false;
    return false;
  }
  ptrace(PTRACE_CONT, pid_, nullptr, nullptr);
  for (;;) {
    if (take_stop(pid_, status, true) != 1) {
      why = "the program exited before reaching its entry point (the loader failed?)";
      attached_ = false;
      return false;
    }
    user_regs_struct regs{};
    if (WSTOPSIG(status) == SIGTRAP && (status >> 16) == 0 && ptrace(PTRACE_GETREGS, pid_, nullptr, &regs) == 0 &&
        regs.rip == entry + 1) {
      ptrace(PTRACE_POKETEXT, pid_, reinterpret_cast<void*>(entry), reinterpret_cast<void*>(word));
      regs.rip = entry;
      ptrace(PTRACE_SETREGS, pid_, nullptr, &regs);
      break;
    }
    pass_on(pid_, status);
  }
  return true;
#else
  why = "holding a program at its entry is done for x86-64 only";
  return false;
#endif
}

bool ProgramTrace::follow_to_exit(std::string& why) {
  held_ = attached_;
  // Only the exit is wanted now: an exec of another image goes on untraced
  // (PTRACE_SEIZE sends no SIGTRAP for it).
  if (attached_ && ptrace(PTRACE_SETOPTIONS, pid_, nullptr, reinterpret_cast<void*>(intptr_t(PTRACE_O_TRACEEXIT))) == 0 &&
      child_signal_fd() >= 0) {
    following_ = true;
    return true;
  }
  why = attached_ ? std::string("ptrace: ") + std::strerror(errno) : "the program is not traced";
  leave_at_entry();
  return false;
}

void ProgramTrace::leave_at_entry() {
  // The entry stop becomes a plain SIGSTOP, delivered before any instruction
  // of the program runs: the sampler takes its first sample, then release().
  held_ = attached_;
  if (attached_) ptrace(PTRACE_DETACH, pid_, nullptr, reinterpret_cast<void*>(intptr_t(SIGSTOP)));
  attached_ = false;
}

void ProgramTrace::release() {
  if (!held_) return;
  held_ = false;
  if (following_)
    ptrace(PTRACE_CONT, pid_, nullptr, nullptr);
  else
    kill(pid_, SIGCONT);
}

bool ProgramTrace::service() {
  if (!following_ || at_exit_) return at_exit_;
  drain_child_signals();
  int status = 0;
  int r;
  while ((r = take_stop(pid_, status, false)) == 1) {
    const int sig = WSTOPSIG(status);
    if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
      at_exit_ = true;
      return true;
    }
    if (event_of(status) == PTRACE_EVENT_STOP && is_stop_signal(sig)) {
      // A group stop: stopped as it would be untraced, until SIGCONT.
      ptrace(PTRACE_LISTEN, pid_, nullptr, nullptr);
    } else {
      // A signal on its way to the program (delivered now), or another event.
      ptrace(PTRACE_CONT, pid_, nullptr, reinterpret_cast<void*>(intptr_t(event_of(status) ? 0 : sig)));
      if (event_of(status) == 0) count_signal();
    }
  }
  if (r < 0) following_ = attached_ = false;  // gone without an exit stop (SIGKILL)
  return false;
}

void ProgramTrace::count_signal() {
  const double now_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (window_start_ms_ < 0 || now_ms - window_start_ms_ > 1000) {
    window_start_ms_ = now_ms;
    window_signals_ = 0;
  }
  if (++window_signals_ > kSignalHeavy) signal_heavy_ = true;
}

void ProgramTrace::let_exit() {
  if (at_exit_) ptrace(PTRACE_DETACH, pid_, nullptr, nullptr);
  at_exit_ = following_ = attached_ = held_ = false;
}

void ProgramTrace::detach(int limit_ms) {
  if (!attached_) return;
  if (at_exit_ || held_) {
    // Already stopped (at its exit, or at its entry): detached where it is, a
    // program held at its entry going on.
    ptrace(PTRACE_DETACH, pid_, nullptr, nullptr);
    at_exit_ = following_ = attached_ = held_ = false;
    return;
  }
  ptrace(PTRACE_INTERRUPT, pid_, nullptr, nullptr);
  const int fd = child_signal_fd();
  for (int waited = 0; waited <= limit_ms; waited += 10) {
    int status = 0;
    const int r = take_stop(pid_, status, false);
    if (r < 0) break;
    if (r == 1) {
      const bool signal_stop = event_of(status) == 0;
      const int sig = WSTOPSIG(status);
      ptrace(PTRACE_DETACH, pid_, nullptr, reinterpret_cast<void*>(intptr_t(signal_stop ? sig : 0)));
      break;
    }
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 10);
    drain_child_signals();
  }
  following_ = attached_ = false;
}

}  // namespace mh
