// Child processes (see spawn.h).
#include "sys/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "sys/interrupt.h"

extern char** environ;

namespace mh {

namespace {

bool is_allocator_variable(const std::string& name) {
  static const char* exact[] = {"LD_PRELOAD", "MALLOC_CONF", "GLIBC_TUNABLES", "MALLOC_ARENA_MAX",
                                "MALLOC_TOP_PAD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_",
                                "MEMHARNESS_MARK_FD", "MEMHARNESS_ACK_FD"};
  for (const char* e : exact)
    if (name == e) return true;
  for (const char* prefix : {"MIMALLOC_", "TCMALLOC_", "SCAV_", "JE_MALLOC_CONF"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

// In a forked child before its exec: its own process group, and the signal
// state a program gets from a shell (SIGPIPE fatal; nothing blocked, though the
// harness blocks SIGCHLD, child_signal.h). Async-signal-safe calls only.
void start_own_group() {
  setpgid(0, 0);
  signal(SIGPIPE, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace

std::map<std::string, std::string> clean_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string k = kv.substr(0, eq);
    if (!is_allocator_variable(k)) env[k] = kv.substr(eq + 1);
  }
  return env;
}

std::optional<Child> Child::start_paused(const ChildSpec& spec, std::string& error) {
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  int go[2], exec_status[2];
  if (pipe2(go, O_CLOEXEC) < 0 || pipe2(exec_status, O_CLOEXEC) < 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  pid_t pid = fork();
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (pid == 0) {
    start_own_group();
    if (spec.rlimit_as > 0) {
      rlimit lim{spec.rlimit_as, spec.rlimit_as};
      setrlimit(RLIMIT_AS, &lim);
    }
    if (spec.output_fd >= 0) {
      dup2(spec.output_fd, STDOUT_FILENO);
      dup2(spec.output_fd, STDERR_FILENO);
    }
    if (spec.stdin_fd >= 0) dup2(spec.stdin_fd, STDIN_FILENO);
    for (int fd : spec.inherit_fds) fcntl(fd, F_SETFD, 0);
    char byte;
    while (read(go[0], &byte, 1) < 0 && errno == EINTR) {
    }
    if (spec.cwd.empty() || chdir(spec.cwd.c_str()) == 0) execve(spec.path.c_str(), argv.data(), envp.data());
    int err = errno;
    ssize_t w = write(exec_status[1], &err, sizeof err);
    (void)w;
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so the group exists whichever side runs first
  close(go[0]);
  close(exec_status[1]);
  Child c;
  c.pid_ = pid;
  c.go_fd_ = go[1];
  c.exec_fd_ = exec_status[0];
  c.pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (c.pidfd_ < 0) {
    error = std::string("pidfd_open: ") + std::strerror(errno);
    c.signal_group(SIGKILL);
    return std::nullopt;
  }
  return c;
}

Child::Child(Child&& o) noexcept
    : pid_(o.pid_), pidfd_(o.pidfd_), go_fd_(o.go_fd_), exec_fd_(o.exec_fd_), reaped_(o.reaped_) {
  o.pid_ = -1;
  o.pidfd_ = o.go_fd_ = o.exec_fd_ = -1;
}

Child::~Child() {
  if (pid_ > 0 && !reaped_) {
    signal_group(SIGKILL);
    int status;
    rusage ru;
    wait(status, ru);
  }
  for (int fd : {pidfd_, go_fd_, exec_fd_})
    if (fd >= 0) close(fd);
}

bool Child::resume(std::string& error) {
  char byte = 1;
  if (write(go_fd_, &byte, 1) != 1) {
    error = std::string("cannot release the child: ") + std::strerror(errno);
    return false;
  }
  close(go_fd_);
  go_fd_ = -1;
  int err = 0;
  ssize_t n;
  do n = read(exec_fd_, &err, sizeof err);
  while (n < 0 && errno == EINTR);
  close(exec_fd_);
  exec_fd_ = -1;
  if (n == sizeof err) {
    error = std::string("execve failed: ") + std::strerror(err);
    return false;
  }
  return true;
}

void Child::signal_group(int sig) const {
  if (pid_ > 0) kill(-pid_, sig);
}

bool Child::wait(int& status, rusage& usage) {
  if (reaped_) return false;
  pid_t r;
  do r = wait4(pid_, &status, 0, &usage);
  while (r < 0 && errno == EINTR);
  reaped_ = r == pid_;
  return reaped_;
}

Captured run_capture(const std::vector<std::string>& argv, double timeout_s, const std::string& cwd) {
  Captured out;
  int o[2], e[2];
  if (pipe2(o, O_CLOEXEC) < 0) return out;
  if (pipe2(e, O_CLOEXEC) < 0) {
    close(o[0]);
    close(o[1]);
    return out;
  }
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& s : args) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : clean_environment()) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    // Its own group, so that a timeout or a stop ends everything it started
    // (cmake's compilers, git's helpers).
    start_own_group();
    dup2(o[1], STDOUT_FILENO);
    dup2(e[1], STDERR_FILENO);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(127);
    execve(cargv[0], cargv.data(), envp.data());
    _exit(127);
  }
  close(o[1]);
  close(e[1]);
  if (pid < 0) {
    close(o[0]);
    close(e[0]);
    return out;
  }
  setpgid(pid, pid);
  interrupt::set_child_group(pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(int64_t(timeout_s * 1e6));
  pollfd fds[3] = {{o[0], POLLIN, 0}, {e[0], POLLIN, 0}, {interrupt::wake_fd(), POLLIN, 0}};
  int open_count = 2;
  char buf[4096];
  while (open_count > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || interrupt::requested()) {
      out.timed_out = !interrupt::requested();
      break;
    }
    if (poll(fds, 3, int(std::min<int64_t>(left.count(), 1000))) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? out.out : out.err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  for (int i = 0; i < 2; ++i)
    if (fds[i].fd >= 0) close(fds[i].fd);
  if (open_count > 0) kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  interrupt::set_child_group(0);
  if (WIFEXITED(status) && open_count == 0) out.exit_code = WEXITSTATUS(status);
  return out;
}

}  // namespace mh
