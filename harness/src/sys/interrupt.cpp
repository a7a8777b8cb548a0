// Signal handling for interruption (see interrupt.h). The handler only stores
// numbers, writes one byte to a pipe, and on the second signal calls kill and
// _exit (and rmdir, nanosleep): all async-signal-safe.
#include "sys/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
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

// The cgroups a second SIGINT kills (kill_cgroup_on_exit): fixed storage, so
// that the handler reads them without allocating.
struct KillSlot {
  std::atomic<bool> used{false};
  bool v2 = false;
  char path[512] = {};
  char dir[512] = {};  // removed once its processes are gone
};
KillSlot g_kill[8];

// Async-signal-safe: open, read, write, kill only.
void kill_cgroup(const KillSlot& slot) {
  const int fd = open(slot.path, slot.v2 ? O_WRONLY | O_CLOEXEC : O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  if (slot.v2) {
    ssize_t n = write(fd, "1", 1);
    (void)n;
  } else {
    char buf[4096];
    pid_t pid = 0;
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
      for (ssize_t i = 0; i < n; ++i) {
        if (buf[i] >= '0' && buf[i] <= '9') pid = pid * 10 + (buf[i] - '0');
        else if (pid > 0) kill(pid, SIGKILL), pid = 0;
      }
    if (pid > 0) kill(pid, SIGKILL);
  }
  close(fd);
}

// Removes the slots' groups, waiting up to 1 s for their killed processes
// to be gone (rmdir refuses a populated group). rmdir and nanosleep only.
void remove_cgroups() {
  for (int round = 0; round < 200; ++round) {
    bool left = false;
    for (const auto& slot : g_kill)
      if (slot.used.load() && rmdir(slot.dir) != 0 && errno == EBUSY) left = true;
    if (!left) return;
    timespec ts{0, 5000000};
    nanosleep(&ts, nullptr);
  }
}

// The first SIGINT, SIGTERM or SIGHUP asks; the second, of any of them, ends
// the harness here, whatever call the main thread is blocked in (the handler
// runs SA_RESTART, so that a first request never fails a read halfway: the
// call it interrupted goes on and the request is seen when it returns).
void on_signal(int sig) {
  const int saved = errno;
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  if (g_count.fetch_add(1) >= 1) {
    // The user does not want to wait for the grace period, nor for whatever the harness waits on.
    if (pid_t g = g_child_group.load(); g > 0) kill(-g, SIGKILL);
    for (const auto& slot : g_kill)
      if (slot.used.load()) kill_cgroup(slot);
    remove_cgroups();
    ssize_t n = write(STDERR_FILENO, g_note, g_note_size.load());
    (void)n;
    _exit(128 + sig);
  }
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

int kill_cgroup_on_exit(const std::string& dir, bool v2) {
  const std::string path = dir + (v2 ? "/cgroup.kill" : "/cgroup.procs");
  if (path.size() >= sizeof g_kill[0].path) return -1;
  for (int i = 0; i < 8; ++i) {
    KillSlot& slot = g_kill[i];
    if (slot.used.load()) continue;  // main thread only: no race between slots
    slot.v2 = v2;
    std::copy_n(path.c_str(), path.size() + 1, slot.path);
    std::copy_n(dir.c_str(), dir.size() + 1, slot.dir);
    slot.used.store(true);
    return i;
  }
  return -1;
}

void forget_cgroup(int slot) {
  if (slot >= 0 && slot < 8) g_kill[slot].used.store(false);
}

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
