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
#include <string_view>

#include "sys/containment.h"
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

// Credentials a CI runner hands the harness, which the program under test, its
// load generator and a pin's build have no business reading: GitHub's token and
// the action's inputs, its OIDC and runtime tokens, GitLab's and Buildkite's job
// tokens.
bool is_credential_variable(const std::string& name) {
  for (const char* exact : {"GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "CI_JOB_TOKEN", "BUILDKITE_AGENT_ACCESS_TOKEN"})
    if (name == exact) return true;
  for (const char* prefix : {"ACTIONS_ID_TOKEN_REQUEST_", "INPUT_"})
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
    if (!is_allocator_variable(k) && !is_credential_variable(k)) env[k] = kv.substr(eq + 1);
  }
  return env;
}

std::vector<std::string> withheld_credentials() {
  std::vector<std::string> names;
  for (char** e = environ; *e; ++e) {
    const std::string_view kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string_view::npos && is_credential_variable(std::string(kv.substr(0, eq))))
      names.emplace_back(kv.substr(0, eq));
  }
  std::sort(names.begin(), names.end());
  return names;
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
      dup2(spec.error_fd >= 0 ? spec.error_fd : spec.output_fd, STDERR_FILENO);
    }
    if (spec.stdin_fd >= 0) dup2(spec.stdin_fd, STDIN_FILENO);
    for (int fd : spec.inherit_fds) fcntl(fd, F_SETFD, 0);
    // Only the harness holds the write end of `go`: if it dies before resume() (a
    // SIGKILL), the read ends at EOF and the program never starts; a copy of the
    // write end kept here would leave this child waiting for ever.
    close(go[1]);
    close(exec_status[0]);
    char byte;
    ssize_t got;
    while ((got = read(go[0], &byte, 1)) < 0 && errno == EINTR) {
    }
    if (got != 1) _exit(127);
    if (spec.cwd.empty() || chdir(spec.cwd.c_str()) == 0) execve(spec.path.c_str(), argv.data(), envp.data());
    int err = errno;
    ssize_t w = write(exec_status[1], &err, sizeof err);
    (void)w;
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so the group exists whichever side runs first
  containment::note_child(pid, true);
  close(go[0]);
  close(exec_status[1]);
  Child c;
  c.pid_ = pid;
  c.go_fd_ = go[1];
  c.exec_fd_ = exec_status[0];
  c.pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (c.pidfd_ < 0) {
    error = std::string("pidfd_open: ") + std::strerror(errno);
    return std::nullopt;  // its destructor kills and reaps it
  }
  // Held before its exec: everything it will start starts inside.
  if (spec.containment && !spec.containment->add(pid, error)) return std::nullopt;
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
  if (reaped_) containment::note_child(pid_, false);
  return reaped_;
}

namespace {

// A captured helper's stdout and stderr, read as they come.
class CapturePipes {
 public:
  CapturePipes() {
    for (auto& p : pipes_)
      if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) ok_ = false;
  }
  ~CapturePipes() {
    for (auto& p : pipes_)
      for (int fd : p)
        if (fd >= 0) close(fd);
  }
  CapturePipes(const CapturePipes&) = delete;
  CapturePipes& operator=(const CapturePipes&) = delete;

  bool ok() const { return ok_; }
  int out_write() const { return pipes_[0][1]; }
  int err_write() const { return pipes_[1][1]; }
  // Once the child holds them.
  void close_write_ends() {
    for (auto& p : pipes_) close_fd(p[1]);
  }
  // The read ends, for poll (-1 once at their end).
  int read_end(int i) const { return pipes_[i][0]; }
  // Reads what is there now into out.out and out.err.
  void drain(Captured& out) {
    char buf[4096];
    for (int i = 0; i < 2; ++i)
      while (pipes_[i][0] >= 0) {
        ssize_t n = read(pipes_[i][0], buf, sizeof buf);
        if (n > 0) (i == 0 ? out.out : out.err).append(buf, static_cast<size_t>(n));
        else if (n < 0 && errno == EINTR) continue;
        else if (n < 0 && errno == EAGAIN) break;
        else close_fd(pipes_[i][0]);
      }
  }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  int pipes_[2][2] = {{-1, -1}, {-1, -1}};
  bool ok_ = true;
};

// Reads the helper's output until it exits (true), its deadline passes or
// the harness is asked to stop (false: timed_out says which). Its pipes may
// close long before it exits, or stay open long after (a background child
// holds them): the process decides, not the pipes.
bool watch_until_exit(const Child& child, CapturePipes& pipes, double timeout_s, Captured& out) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::microseconds(int64_t(timeout_s * 1e6));
  for (;;) {
    pollfd fds[4] = {{child.pidfd(), POLLIN, 0},
                     {interrupt::wake_fd(), POLLIN, 0},
                     {pipes.read_end(0), POLLIN, 0},
                     {pipes.read_end(1), POLLIN, 0}};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 || interrupt::requested()) {
      out.timed_out = !interrupt::requested();
      return false;
    }
    if (poll(fds, 4, int(std::min<int64_t>(left.count(), 1000))) < 0 && errno != EINTR) return false;
    pipes.drain(out);
    if (fds[0].revents & POLLIN) return true;
  }
}

}  // namespace

Captured run_capture(const std::vector<std::string>& argv, double timeout_s, const std::string& cwd) {
  Captured out;
  CapturePipes pipes;
  if (!pipes.ok() || argv.empty()) return out;
  Containment box(containment::unique_name("helper"));
  ChildSpec spec;
  spec.path = argv[0];
  spec.argv = argv;
  spec.env = clean_environment();
  spec.output_fd = pipes.out_write();
  spec.error_fd = pipes.err_write();
  spec.cwd = cwd;
  spec.containment = &box;
  std::string error;
  auto child = Child::start_paused(spec, error);
  pipes.close_write_ends();
  if (!child) {
    out.err = error;
    return out;
  }
  interrupt::set_child_group(child->pid());
  if (!child->resume(error)) out.err = error;  // the child ends with status 127
  const bool exited = watch_until_exit(*child, pipes, timeout_s, out);
  if (exited) out.leftovers = box.members();  // else they end with it, at its deadline
  box.kill();
  pipes.drain(out);
  int status = 0;
  rusage usage{};
  child->wait(status, usage);
  interrupt::set_child_group(0);
  if (exited && WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  return out;
}

}  // namespace mh
