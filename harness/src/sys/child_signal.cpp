// SIGCHLD as a descriptor (see child_signal.h).
#include "sys/child_signal.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

namespace mh {

int child_signal_fd() {
  static int fd = -1;
  if (fd >= 0) return fd;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  // Blocked before the descriptor exists, so no SIGCHLD is lost in between:
  // a pending one is read from the descriptor.
  if (sigprocmask(SIG_BLOCK, &set, nullptr) < 0) return -1;
  fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  return fd;
}

void drain_child_signals() {
  const int fd = child_signal_fd();
  if (fd < 0) return;
  signalfd_siginfo info[16];
  while (read(fd, info, sizeof info) > 0) {
  }
}

}  // namespace mh
