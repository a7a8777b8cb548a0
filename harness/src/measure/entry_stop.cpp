// A program held at its entry point with ptrace (see entry_stop.h). The only
// platform-specific file of the harness: x86-64 registers and breakpoint.
#include "measure/entry_stop.h"

#include <elf.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <fstream>

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

// The next ptrace stop of `pid`, consumed; false when the child exited
// instead (left for its owner to reap).
bool next_stop(pid_t pid, int& status) {
  siginfo_t info{};
  while (waitid(P_PID, pid, &info, WEXITED | WSTOPPED | WNOWAIT | __WALL) < 0)
    if (errno != EINTR) return false;
  if (info.si_code == CLD_EXITED || info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED) return false;
  while (waitpid(pid, &status, __WALL) < 0)
    if (errno != EINTR) return false;
  return WIFSTOPPED(status);
}

// Lets a stop other than ours go on, handing a signal-delivery stop its signal.
void pass_on(pid_t pid, int status) {
  const int sig = WSTOPSIG(status);
  const bool event = (status >> 16) != 0;
  ptrace(PTRACE_CONT, pid, nullptr, reinterpret_cast<void*>(intptr_t(event || sig == SIGTRAP ? 0 : sig)));
}

}  // namespace

bool EntryStop::attach(pid_t pid, std::string& why) {
#if defined(__x86_64__)
  if (ptrace(PTRACE_SEIZE, pid, nullptr, reinterpret_cast<void*>(intptr_t(PTRACE_O_TRACEEXEC))) < 0) {
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

bool EntryStop::run_to_entry(std::string& why) {
#if defined(__x86_64__)
  int status = 0;
  // The exec: the new image is in place, the loader has not run yet.
  for (;;) {
    if (!next_stop(pid_, status)) {
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
    if (!next_stop(pid_, status)) {
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

void EntryStop::leave_stopped() {
  // The stop becomes a plain SIGSTOP, delivered before any instruction of the
  // program runs: the sampler takes its first sample, then release().
  if (attached_) ptrace(PTRACE_DETACH, pid_, nullptr, reinterpret_cast<void*>(intptr_t(SIGSTOP)));
  attached_ = false;
}

void EntryStop::release() const {
  if (pid_ > 0) kill(pid_, SIGCONT);
}

}  // namespace mh
