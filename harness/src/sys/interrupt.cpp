// Signal handling for interruption (see interrupt.h). The handler only stores
// numbers, writes one byte to a pipe, and on the second SIGINT calls kill and
// _exit: all async-signal-safe.
#include "sys/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

namespace mh::interrupt {

namespace {

std::atomic<int> g_signal{0};
std::atomic<int> g_count{0};
std::atomic<pid_t> g_child_group{0};
int g_pipe[2] = {-1, -1};
// set_exit_note's text: written before the handler can run, never while it does.
char g_note[1024];
std::atomic<size_t> g_note_size{0};

void on_signal(int sig) {
  const int saved = errno;
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  if (sig == SIGINT && g_count.fetch_add(1) >= 1) {
    // The second Ctrl-C: the user does not want to wait for the grace period.
    if (pid_t g = g_child_group.load(); g > 0) kill(-g, SIGKILL);
    ssize_t n = write(STDERR_FILENO, g_note, g_note_size.load());
    (void)n;
    _exit(130);
  }
  if (sig != SIGINT) g_count.fetch_add(1);
  char byte = 1;
  ssize_t w = write(g_pipe[1], &byte, 1);
  (void)w;
  errno = saved;
}

}  // namespace

void install() {
  if (g_pipe[0] >= 0) return;
  if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) < 0) return;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

int requested() { return g_signal.load(); }

int exit_code() {
  const int s = g_signal.load();
  return s ? 128 + s : 0;
}

int wake_fd() { return g_pipe[0]; }

void set_exit_note(const std::string& note) {
  g_note_size.store(0);  // the handler writes nothing while the text changes
  const size_t n = std::min(note.size(), sizeof g_note);
  std::copy_n(note.data(), n, g_note);
  g_note_size.store(n);
}

void set_child_group(pid_t pgid) { g_child_group.store(pgid); }

void kill_child_group() {
  if (pid_t g = g_child_group.exchange(0); g > 0) kill(-g, SIGKILL);
}

void reset() {
  g_signal.store(0);
  g_count.store(0);
  char buf[64];
  if (g_pipe[0] >= 0)
    while (read(g_pipe[0], buf, sizeof buf) > 0) {
    }
}

}  // namespace mh::interrupt
