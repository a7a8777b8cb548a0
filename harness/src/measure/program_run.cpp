// The driver of a program run (see program_run.h).
#include "measure/program_run.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/escape.h"

namespace mh {

namespace {

constexpr size_t kKeep = 4096;           // bytes of output kept at the start and at the end
constexpr size_t kLongestLine = 65536;   // a longer line is matched in pieces
constexpr auto kPortRetry = std::chrono::milliseconds(50);
constexpr auto kMapsEvery = std::chrono::milliseconds(1000);

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

bool matches(const Pattern& r, const std::string& line) { return r.found_in(line); }

}  // namespace

bool run_setup(const Program& p, const std::string& dir, double timeout_s, RunRecord& rec, std::string& error) {
  auto argv = p.setup_argv;
  argv[0] = p.setup_path;
  const auto t0 = std::chrono::steady_clock::now();
  const Captured c = run_capture(argv, timeout_s, dir);
  const double ms = ms_between(t0, std::chrono::steady_clock::now());
  rec.data["setup"] = Json{{"command", escape::identity(p.setup_argv)},
                           {"wall_ms", std::round(ms * 100) / 100},
                           {"exit_code", c.exit_code >= 0 ? Json(c.exit_code) : Json()}};
  for (auto left : c.leftovers) {
    left.from = "set-up";
    rec.leftover_processes.push_back(std::move(left));
  }
  if (c.exit_code == 0) return true;
  const std::string said = c.err.empty() ? c.out : c.err;
  error = "the set-up " + escape::identity(p.setup_argv[0]) + " " +
          (c.timed_out ? "was still running after " + std::to_string(int(timeout_s)) + " s (--timeout)"
                       : c.exit_code >= 0 ? "failed (exit status " + std::to_string(c.exit_code) + ")"
                                          : std::string("did not exit normally")) +
          (said.empty() ? "" : ": " + escape::shown_tail(said, 300));
  return false;
}

ProgramDriver::ProgramDriver(const Program& p, int pid, Clock::time_point t0, int output_fd, const std::string& library,
                             Containment* load_box)
    : p_(p), t0_(t0), maps_(pid, library), timed_(p.timed_marks), load_box_(load_box) {
  out_.fd = output_fd;
  // Every pattern was compiled once already when the program was read (program.h).
  std::string ignored;
  for (const auto& m : p.output_marks) output_regexes_.push_back(*Pattern::compile(m.regex, ignored));
  if (!p.ready_regex.empty()) ready_regex_ = Pattern::compile(p.ready_regex, ignored);
  for (const auto& m : p.load_metrics) load_regexes_.push_back(*Pattern::compile(m.regex, ignored));
  std::stable_sort(timed_.begin(), timed_.end(), [](auto& a, auto& b) { return a.ms < b.ms; });
  next_port_try_ = next_maps_ = t0;
}

ProgramDriver::~ProgramDriver() {
  for (int fd : {out_.fd, load_out_.fd})
    if (fd >= 0) close(fd);
  // A load generator still running (the harness was stopped): its group goes
  // with the Child's destructor.
}

template <class F>
void ProgramDriver::drain(Stream& s, F on_line) {
  if (s.fd < 0) return;
  char buf[8192];
  for (;;) {
    ssize_t n = read(s.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {  // every writer is gone
      close(s.fd);
      s.fd = -1;
    }
    if (n <= 0) break;
    const std::string chunk(buf, static_cast<size_t>(n));
    if (s.head.size() < kKeep) s.head += chunk.substr(0, kKeep - s.head.size());
    s.tail += chunk;
    if (s.tail.size() > 2 * kKeep) s.tail.erase(0, s.tail.size() - kKeep);
    for (char c : chunk) {
      if (c == '\n' || c == '\r' || s.partial.size() >= kLongestLine) {
        if (!s.partial.empty()) on_line(s.partial);
        s.partial.clear();
        if (c == '\n' || c == '\r') continue;
      }
      s.partial += c;
    }
  }
  if (s.fd < 0 && !s.partial.empty()) {
    on_line(s.partial);
    s.partial.clear();
  }
}

std::vector<int> ProgramDriver::watch_fds() const {
  return {out_.fd, load_out_.fd, load_ ? load_->pidfd() : -1};
}

bool loopback_port_accepts(int port) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(s);
  return ok;
}

int free_loopback_port() {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  close(s);
  return ok ? ntohs(a.sin_port) : 0;
}

std::string ready_port_taken(const Program& p) {
  if (p.ready_port_auto && p.ready_port <= 0) return "no free port of 127.0.0.1 could be had for ready_port auto";
  if (p.ready_port <= 0 || !loopback_port_accepts(p.ready_port)) return "";
  return fmt::format("127.0.0.1:{} already accepts connections before the program started (another server, "
                     "perhaps another harness's run of it): its readiness and its load would reach that server, not "
                     "this one; stop it, or give the program another port",
                     p.ready_port);
}

void ProgramDriver::start_load(Clock::time_point now, std::vector<std::string>& marks) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) < 0) {
    error_ = std::string("pipe for the load generator: ") + std::strerror(errno);
    return;
  }
  fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
  if (load_out_.fd >= 0) close(load_out_.fd);  // a soak's earlier run's
  load_out_.fd = -1;
  load_out_.partial.clear();
  ChildSpec spec;
  spec.path = p_.load_path;
  spec.argv = p_.load_argv;
  spec.env = clean_environment();  // no LD_PRELOAD, no allocator options, no mark descriptors
  spec.output_fd = pipe_fds[1];
  spec.cwd = p_.cwd;
  spec.containment = load_box_;
  std::string why;
  auto child = Child::start_paused(spec, why);
  close(pipe_fds[1]);
  if (!child || !child->resume(why)) {
    close(pipe_fds[0]);
    error_ = "the load generator " + escape::identity(p_.load_argv[0]) + " could not be started: " + why;
    return;
  }
  load_.emplace(std::move(*child));
  load_out_.fd = pipe_fds[0];
  if (loops_ > 0) return;
  load_start_ = now;
  marks.push_back("load-start");
}

std::vector<std::string> ProgramDriver::step(Clock::time_point now, bool alive) {
  std::vector<std::string> marks;
  const bool became_ready = read_output(marks);
  while (next_timed_ < timed_.size() && ms_between(t0_, now) >= timed_[next_timed_].ms)
    marks.push_back(timed_[next_timed_++].name);
  if (!alive) return marks;
  update_readiness(now, became_ready, marks);
  if (load_) watch_load(now, marks);
  if (now >= next_maps_) {
    maps_.check();
    next_maps_ = now + kMapsEvery;
  }
  if (stop_at_ && now >= *stop_at_) stopped_ = true;
  return marks;
}

bool ProgramDriver::read_output(std::vector<std::string>& marks) {
  bool became_ready = false;
  drain(out_, [&](const std::string& line) {
    for (size_t i = 0; i < output_regexes_.size(); ++i)
      if (matches(output_regexes_[i], line)) marks.push_back(p_.output_marks[i].name);
    if (!ready_ && !became_ready && ready_regex_ && matches(*ready_regex_, line)) became_ready = true;
  });
  return became_ready;
}

void ProgramDriver::update_readiness(Clock::time_point now, bool became_ready, std::vector<std::string>& marks) {
  if (!ready_ && !became_ready && p_.ready_port > 0 && now >= next_port_try_) {
    became_ready = loopback_port_accepts(p_.ready_port);
    next_port_try_ = now + kPortRetry;
  }
  if (became_ready) {
    ready_ = true;
    marks.push_back("ready");
    if (!p_.load_argv.empty()) start_load(now, marks);
    else if (p_.idle_s) stop_at_ = now + seconds(*p_.idle_s);
  } else if (!ready_ && p_.waits_for_ready() && now - t0_ >= seconds(p_.ready_timeout_s)) {
    error_ = "not ready after " + std::to_string(int(p_.ready_timeout_s)) + " s (--ready-timeout): " +
             (ready_regex_ ? "no output line matched '" + p_.ready_regex + "'"
                           : "nothing accepted a connection on 127.0.0.1:" + std::to_string(p_.ready_port));
  }
}

void ProgramDriver::watch_load(Clock::time_point now, std::vector<std::string>& marks) {
  drain(load_out_, [&](const std::string& line) {
    for (size_t i = 0; i < p_.load_metrics.size(); ++i) {
      const auto& m = p_.load_metrics[i];
      if (auto found = load_regexes_[i].first_group(line)) {
        char* end = nullptr;
        const std::string text = *found;
        double v = std::strtod(text.c_str(), &end);
        if (!text.empty() && *end == '\0') load_record_["metrics"][m.name] = v;
      }
    }
  });
  pollfd pf{load_->pidfd(), POLLIN, 0};
  if (load_record_.value("exit_code", Json()).is_null() && poll(&pf, 1, 0) == 1) load_ended(now, marks);
}

int ProgramDriver::reap_load() {
  int status = 0;
  rusage ru{};
  load_->wait(status, ru);
  drain(load_out_, [](const std::string&) {});
  ++loops_;
  const auto add = [&](const char* key, double v) { load_record_[key] = load_record_.value(key, 0.0) + v; };
  add("utime_ms", double(ru.ru_utime.tv_sec) * 1e3 + double(ru.ru_utime.tv_usec) / 1e3);
  add("stime_ms", double(ru.ru_stime.tv_sec) * 1e3 + double(ru.ru_stime.tv_usec) / 1e3);
  const auto count = [&](const char* key, int64_t v) { load_record_[key] = load_record_.value(key, int64_t{0}) + v; };
  count("minflt", ru.ru_minflt);
  count("majflt", ru.ru_majflt);
  load_record_["maxrss_kb"] = std::max<int64_t>(load_record_.value("maxrss_kb", int64_t{0}), ru.ru_maxrss);
  if (loop_until_) load_record_["loops"] = loops_;
  return status;
}

void ProgramDriver::load_ended(Clock::time_point now, std::vector<std::string>& marks) {
  const int status = reap_load();
  const bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  if (!failed && loop_until_ && now < *loop_until_) {
    // One run of a soak's load generator ended: the next run, after a mark
    // at the 1st, 2nd, 4th, 8th... so that a soak of any length keeps few
    // marks (each reads smaps_rollup, and call sites under --heap-sample).
    if ((loops_ & (loops_ - 1)) == 0) marks.push_back(fmt::format("loop-{}", loops_));
    start_load(now, marks);
    return;
  }
  marks.push_back("load-end");
  load_record_["command"] = escape::identity(p_.load_argv);
  load_record_["exit_code"] = WIFEXITED(status) ? Json(WEXITSTATUS(status)) : Json(nullptr);
  load_record_["signal"] = WIFSIGNALED(status) ? Json(WTERMSIG(status)) : Json(nullptr);
  load_record_["wall_ms"] = std::round(ms_between(load_start_, now) * 100) / 100;
  if (failed)
    error_ = "the load generator " + escape::identity(p_.load_argv[0]) + " failed (" +
             (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                : "killed by signal " + std::string(strsignal(WTERMSIG(status)))) +
             "): " + escape::shown_tail(load_out_.tail, 300);
  stop_at_ = now + seconds(p_.idle_s.value_or(0));
}

SamplerDriver::Clock::time_point ProgramDriver::next_wake() const {
  auto wake = next_maps_;
  if (next_timed_ < timed_.size())
    wake = std::min(wake, t0_ + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double, std::milli>(timed_[next_timed_].ms)));
  if (!ready_ && p_.ready_port > 0) wake = std::min(wake, next_port_try_);
  if (!ready_ && p_.waits_for_ready()) wake = std::min(wake, t0_ + seconds(p_.ready_timeout_s));
  if (stop_at_) wake = std::min(wake, *stop_at_);
  return wake;
}

std::optional<SamplerEnd> ProgramDriver::end(std::string& error) const {
  if (!error_.empty()) {
    error = error_;
    return SamplerEnd::Error;
  }
  if (stopped_) return SamplerEnd::Stopped;
  return std::nullopt;
}

void ProgramDriver::finish(RunRecord& rec) {
  if (load_ && load_record_.value("exit_code", Json()).is_null()) {
    // The program ended first: the load generator has nothing left to load.
    load_->signal_group(SIGTERM);
    pollfd pf{load_->pidfd(), POLLIN, 0};
    if (poll(&pf, 1, int(p_.stop_grace_s * 1000)) <= 0) load_->signal_group(SIGKILL);
    int status = 0;
    rusage ru{};
    load_->wait(status, ru);
    load_record_["command"] = escape::identity(p_.load_argv);
    load_record_["stopped"] = "the program ended before the load generator; it was stopped";
  }
  drain(out_, [](const std::string&) {});
  drain(load_out_, [](const std::string&) {});
  // Text only shown: valid UTF-8, and the cut never splits a character.
  rec.output_tail = escape::shown_tail(out_.tail, kKeep);
  head_ = out_.head;
  if (load_) {
    load_record_["output_tail"] = escape::shown_tail(load_out_.tail, kKeep);
    rec.data["load"] = load_record_;
  }
  for (const auto& m : p_.load_metrics) {
    Maybe v;
    if (load_record_.contains("metrics") && load_record_["metrics"].contains(m.name))
      v.value = load_record_["metrics"][m.name].get<double>();
    else
      v.reason = load_ ? "no line of the load generator's output matched '" + m.regex + "' with a number"
                       : "the load generator never ran";
    rec.workload_metrics[m.name] = v;
  }
  maps_.apply(rec.allocator);
}

}  // namespace mh
