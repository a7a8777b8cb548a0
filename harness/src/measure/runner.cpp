// run_one: spawn -> sample -> record (see runner.h).
#include "measure/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "core/curve.h"
#include "core/escape.h"
#include "core/derived_metrics.h"
#include "measure/program_trace.h"
#include "sys/containment.h"
#include "sys/interrupt.h"
#include "measure/memory_group.h"
#include "measure/perf.h"
#include "measure/program_run.h"
#include "measure/sampler.h"
#include "sys/procfs.h"
#include "sys/resolved_path.h"
#include "sys/spawn.h"
#include "sys/symbolize.h"

namespace mh {

namespace {

using Clock = std::chrono::steady_clock;

// Grace between SIGTERM and SIGKILL for a workload that ran out of time.
constexpr int kTermGraceMs = 2000;

std::string tail_of(int fd, size_t max_bytes) {
  off_t size = lseek(fd, 0, SEEK_END);
  if (size <= 0) return {};
  off_t start = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
  std::string out(static_cast<size_t>(size - start), '\0');
  ssize_t n = pread(fd, out.data(), out.size(), start);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

// "1234 sleep (set-up), 1240 redis-server": the first few, for a message.
std::string leftovers_named(const std::vector<LeftoverProcess>& list) {
  std::string out;
  for (size_t i = 0; i < list.size() && i < 5; ++i)
    out += (i ? ", " : "") + std::to_string(list[i].pid) + " " + list[i].comm +
           (list[i].from == "program" ? "" : " (" + list[i].from + ")");
  return out + (list.size() > 5 ? ", ..." : "");
}

}  // namespace

void judge(RunRecord& rec, const RunEnd& end, const std::vector<std::string>& declared_metrics) {
  std::string missing;
  for (const auto& m : declared_metrics)
    if (!rec.workload_metrics.count(m)) missing += (missing.empty() ? "" : ", ") + m;
  auto& a = rec.allocator;
  if (a.verified_by == "probe") {
    a.verified = !a.identified.empty() && a.identified == (a.family == "custom" ? a.identified : a.family);
    if (a.verified && !a.library.empty()) a.verified = canonical_or_same(a.served_by) == canonical_or_same(a.library);
  }
  // A program the harness stopped as planned (after its idle time) did not fail.
  const bool stopped = end.how == SamplerEnd::Stopped;
  const int ws = end.wait_status;
  const std::string under_limit = end.limit_note.empty() ? "" : " (" + end.limit_note + ")";

  if (!end.error.empty()) {
    rec.status = Status::Failed;
    rec.exit.error = end.error;
  } else if (end.how == SamplerEnd::Interrupted) {
    rec.status = Status::Interrupted;
    rec.exit.error = "stopped because the harness was asked to stop; the process group was killed";
  } else if (end.oom) {
    rec.status = Status::Oom;
    rec.exit.error = "killed by the kernel's OOM killer at the memory limit" + under_limit;
  } else if (end.how == SamplerEnd::TimedOut) {
    rec.status = Status::Timeout;
    rec.exit.error = "still running after the timeout; the process group was killed";
  } else if (!stopped && WIFSIGNALED(ws)) {
    rec.status = Status::Crashed;
    rec.exit.error = std::string("killed by signal ") + strsignal(WTERMSIG(ws)) + under_limit;
  } else if (!stopped && rec.exit.code.value_or(-1) != end.expected_exit) {
    rec.status = Status::Failed;
    rec.exit.error = "exited with status " + std::to_string(rec.exit.code.value_or(-1)) +
                     (end.expected_exit ? " (expected " + std::to_string(end.expected_exit) + ")" : "") + under_limit;
  } else if (end.fail_on_leftovers && !rec.leftover_processes.empty()) {
    rec.status = Status::Failed;
    rec.exit.error = std::to_string(rec.leftover_processes.size()) + " process(es) outlived what started them " +
                     "(--leftovers fail); they were killed: " + leftovers_named(rec.leftover_processes);
  } else if (rec.samples.empty()) {
    rec.status = Status::Failed;
    rec.exit.error = "no sample of the process could be read" +
                     (rec.sampler.unreadable.count("rss_kb") ? ": " + rec.sampler.unreadable.at("rss_kb") : "");
  } else if (!rec.protocol_errors.empty()) {
    rec.status = Status::Failed;
    rec.exit.error = "mark protocol: " + rec.protocol_errors.front();
  } else if (!a.verified) {
    rec.status = Status::Failed;
    rec.exit.error = !a.why_unverified.empty() ? "allocator not verified: " + a.why_unverified
                     : a.identified.empty()
                         ? "the workload never said which allocator served malloc"
                         : "asked for " + a.name + " but malloc was served by " + a.identified + " (" + a.served_by + ")";
  } else if (!missing.empty()) {
    rec.status = Status::Failed;
    rec.exit.error = "the workload did not report its declared metrics: " + missing;
  } else {
    rec.status = Status::Ok;
  }
}

namespace {

// The run's own temporary directory, given to the workload as TMPDIR and
// removed with everything in it when the run is over, however it ended.
class RunTempDir {
 public:
  explicit RunTempDir(const std::string& parent) {
    std::string base = parent;
    if (base.empty()) {
      const char* t = std::getenv("TMPDIR");
      base = (t && *t) ? t : "/tmp";
    }
    std::string templ = base + "/memharness-run-XXXXXX";
    if (mkdtemp(templ.data())) path_ = templ;
    else error_ = "cannot make a temporary directory in " + base + ": " + std::strerror(errno);
  }
  ~RunTempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_, error_;
};

// The descriptors between the harness and the child: the mark protocol's two
// pipes, where the child's output goes, a program's standard input. The
// child's ends are closed once it was started, the rest with this.
class Channels {
 public:
  Channels() = default;
  Channels(const Channels&) = delete;
  Channels& operator=(const Channels&) = delete;
  ~Channels() {
    for (int fd : {marks_[0], marks_[1], acks_[0], acks_[1], output_, program_output_, stdin_})
      if (fd >= 0) close(fd);
  }

  // False with the error when the mark protocol's pipes cannot be made.
  bool open(const Program* program, std::string& error) {
    if (pipe2(marks_, O_CLOEXEC) < 0 || pipe2(acks_, O_CLOEXEC) < 0) {
      error = std::string("pipe: ") + std::strerror(errno);
      return false;
    }
    fcntl(marks_[0], F_SETFL, O_NONBLOCK);
    // A workload's output is read once it is over; a program's as it comes
    // (marks on output, readiness), through a pipe.
    if (!program) {
      output_ = memfd_create("workload-output", MFD_CLOEXEC);
    } else if (int p[2]; pipe2(p, O_CLOEXEC) == 0) {
      program_output_ = p[0];
      output_ = p[1];
      fcntl(program_output_, F_SETFL, O_NONBLOCK);
    }
    if (program) {
      const std::string in = program->stdin_path.empty() ? "/dev/null" : program->stdin_path;
      stdin_ = ::open(in.c_str(), O_RDONLY | O_CLOEXEC);
    }
    return true;
  }

  int mark_read() const { return marks_[0]; }
  int mark_write() const { return marks_[1]; }
  int ack_read() const { return acks_[0]; }
  int ack_write() const { return acks_[1]; }
  // The child's stdout and stderr: a workload's memfd (kept for reading once
  // it is over), a program's pipe (-1 once the program holds it).
  int output() const { return output_; }
  int program_stdin() const { return stdin_; }

  // Once the child was started (or failed to start): its ends are its own.
  void child_started(bool program) {
    close_fd(marks_[1]);
    close_fd(acks_[0]);
    if (program) {
      close_fd(stdin_);
      close_fd(output_);  // the program holds the write end
    }
  }
  // The read end of a program's output, for its driver, which closes it.
  int take_program_output() { return std::exchange(program_output_, -1); }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
  }

  int marks_[2] = {-1, -1}, acks_[2] = {-1, -1};
  int output_ = -1, program_output_ = -1, stdin_ = -1;
};

double ms_of(const timeval& t) { return double(t.tv_sec) * 1e3 + double(t.tv_usec) / 1e3; }

// The run metrics wait4 gives (read_rusage), with cpu_ms made of two of them.
constexpr const char* kRusageMetrics[] = {"maxrss_kb", "minflt",   "majflt",    "utime_ms",
                                          "stime_ms",  "cpu_ms",   "vol_ctxsw", "invol_ctxsw"};

// A child that never reached its exec (or was never started): wait4's figures
// would be those of the harness's own forked copy, so there are none.
void rusage_not_measured(RunRecord& rec, const std::string& why) {
  for (const char* m : kRusageMetrics) rec.unmeasured[m] = why;
}

// wait4's figures of the child (the hwm_kb and maxrss_kb it raises are
// derive_run_metrics's).
void read_rusage(RunRecord& rec, const rusage& ru) {
  rec.maxrss_kb = ru.ru_maxrss;
  rec.minflt = ru.ru_minflt;
  rec.majflt = ru.ru_majflt;
  rec.utime_ms = ms_of(ru.ru_utime);
  rec.stime_ms = ms_of(ru.ru_stime);
  rec.vol_ctxsw = ru.ru_nvcsw;
  rec.invol_ctxsw = ru.ru_nivcsw;
}

// One run, from its preparation to its verdict; run_one calls the steps in
// order. Main thread, one run at a time.
class OneRun {
 public:
  explicit OneRun(const RunRequest& req);
  // The temporary directory, a program's set-up, the channels, the child's
  // spec and its memory limit. False when the run cannot go on.
  bool prepare();
  // Starts the child, samples it until it ends (stopping it when it did not
  // end by itself) and reaps it.
  // Under --soak a workload or program is started again each time it ended
  // well, until the soak's end; its samples make one series.
  void start_and_sample();
  // How the child ended: its exit and wait4's figures.
  void read_end();
  // The run metrics and the curve's from the samples, marks and figures.
  void derive_metrics();
  // The output's tail into the record; returns what the allocator said
  // against its options ("" when nothing).
  std::string read_output();
  // What outlived the program and its load generator: named in the record,
  // then killed or left running (--leftovers).
  void end_leftovers();
  // judge's verdict, then the allocator's complaint.
  RunRecord judged(const std::string& complaint);
  // After a failed prepare: the verdict at once, nothing measured.
  RunRecord judged_early();

 private:
  bool run_program_setup();
  // The channels and the child's spec for one start of the child.
  bool open_channels();
  // One start of the child: runs, is sampled (from t0_, its first start), is reaped.
  void start_child();
  // Whether a soak starts the child again.
  bool another_repetition() const;
  void record_soak();
  ChildSpec child_spec() const;
  void make_memory_group();
  void start_driver(pid_t pid, Clock::time_point t0, bool traced);
  void sample(const Child& child, Clock::time_point t0);
  void stop(const Child& child);
  std::string workload_output();

  const RunRequest& req_;
  // The request's settings; under --soak the timeout counts from the soak's end.
  RunSettings run_;
  // Under --soak: the series kept bounded, whether the child is started
  // again (a workload, a program without a load generator), how many times it was.
  std::optional<SeriesBound> series_;
  bool repeats_ = false;
  int64_t repetitions_ = 0;
  std::optional<Clock::time_point> t0_;  // the first start of the child: the samples' time 0
  Clock::time_point ended_;  // when the last start was reaped
  RunRecord rec_;
  RunEnd end_;
  RunTempDir tmp_;
  std::string program_cwd_;
  std::optional<Channels> channels_;
  ChildSpec spec_;
  std::optional<MemoryGroup> group_;
  // The program's containment (its group's name is the memory group's too,
  // so that under cgroup v2 both are one group) and the load generator's.
  // Declared after group_ so that they go first.
  std::string group_name_;
  std::optional<Containment> box_, load_box_;
  std::optional<ProgramDriver> driver_;
  ProgramTrace trace_;  // a program's, from its entry to its exit stop
  int status_ = 0;  // wait4's
  rusage ru_{};
  bool execed_ = false;  // the child reached its exec: wait4's figures are its own
};

OneRun::OneRun(const RunRequest& req) : req_(req), run_(req.run), tmp_(req.tmp_parent) {
  if (run_.soak_s > 0) {
    run_.timeout_s += run_.soak_s;
    series_.emplace(kSoakSeriesPoints);
    repeats_ = !req.program || req.program->load_argv.empty();
  }
  rec_.workload = req.workload;
  rec_.params = req.params;
  rec_.repetition = req.repetition;
  rec_.allocator.name = req.allocator.label;
  rec_.allocator.family = req.allocator.family;
  rec_.allocator.library = req.allocator.library;
  for (const auto& [k, v] : req.allocator.env) rec_.allocator.env[escape::identity(k)] = escape::identity(v);
  rec_.allocator.verified_by = req.program ? "maps" : "probe";
  if (req.program) end_.expected_exit = req.program->expect_exit;
}

bool OneRun::prepare() {
  if (!tmp_.error().empty()) {
    end_.error = tmp_.error();
    return false;
  }
  if (!run_program_setup()) return false;
  group_name_ = containment::unique_name("run");
  box_.emplace(group_name_);
  if (req_.program && !req_.program->load_argv.empty()) load_box_.emplace(containment::unique_name("load"));
  if (!open_channels()) return false;
  make_memory_group();
  return true;
}

bool OneRun::open_channels() {
  channels_.emplace();
  if (!channels_->open(req_.program, end_.error)) return false;
  spec_ = child_spec();
  spec_.containment = &*box_;
  return true;
}

// A program's set-up makes its inputs, unmeasured, where it will run.
bool OneRun::run_program_setup() {
  const bool set_up = req_.program && !req_.program->setup_argv.empty();
  if (req_.program) program_cwd_ = set_up && req_.program->cwd.empty() ? tmp_.path() : req_.program->cwd;
  if (!set_up || run_setup(*req_.program, program_cwd_, run_.timeout_s - run_.soak_s, rec_, end_.error)) return true;
  if (interrupt::requested()) {
    end_.error.clear();
    end_.how = SamplerEnd::Interrupted;
  }
  return false;
}

ChildSpec OneRun::child_spec() const {
  ChildSpec spec;
  spec.path = req_.binary;
  spec.argv.push_back(req_.binary);
  spec.argv.insert(spec.argv.end(), req_.args.begin(), req_.args.end());
  spec.env = clean_environment();
  if (req_.program) {
    spec.path = req_.program->path;
    spec.argv = req_.program->argv;
    spec.cwd = program_cwd_;
    for (const auto& [k, v] : req_.program->env) spec.env[k] = v;
    spec.stdin_fd = channels_->program_stdin();
  }
  for (const auto& [k, v] : req_.allocator.env) spec.env[k] = v;
  // The ledger ahead of the allocator: it forwards every call to the next definition.
  std::string preload = req_.ledger_library;
  if (!req_.allocator.library.empty()) preload += (preload.empty() ? "" : ":") + req_.allocator.library;
  if (!preload.empty()) spec.env["LD_PRELOAD"] = preload;
  if (!req_.ledger_library.empty()) {
    // The ledger samples call sites only when asked (--heap-sample): 0 keeps its cost that of counting.
    spec.env["MEMHARNESS_LEDGER_SAMPLE"] = std::to_string(req_.run.heap_sample);
    if (req_.run.ledger_seed) spec.env["MEMHARNESS_LEDGER_SEED"] = std::to_string(*req_.run.ledger_seed);
  }
  spec.env["MEMHARNESS_MARK_FD"] = std::to_string(channels_->mark_write());
  spec.env["MEMHARNESS_ACK_FD"] = std::to_string(channels_->ack_read());
  spec.env["TMPDIR"] = tmp_.path();
  spec.inherit_fds = {channels_->mark_write(), channels_->ack_read()};
  spec.output_fd = channels_->output();
  return spec;
}

// The run's memory group, with the limit when one is asked for; a limit
// without a group falls back to RLIMIT_AS.
void OneRun::make_memory_group() {
  const uint64_t bytes = req_.run.memory_limit;
  group_.emplace(MemoryGroupSettings{bytes, req_.run.memory_high}, group_name_);
  if (req_.run.memory_high) {
    rec_.memory_group_info["high_bytes"] = req_.run.memory_high;
    end_.limit_note = "--memory-high " + std::to_string(req_.run.memory_high) + " bytes";
  }
  if (bytes == 0) return;
  const std::string mechanism = group_->limited() ? group_->limit_mechanism() : std::string("RLIMIT_AS");
  std::string note;
  if (!group_->limited()) {
    spec_.rlimit_as = bytes;
    note = "no memory cgroup could be made (" + group_->why() +
           "): RLIMIT_AS limits address space, not resident memory, and an allocation past it fails "
           "instead of being killed";
  }
  rec_.memory_limit = memory_limit_json(bytes, mechanism, note);
  end_.limit_note = "--memory-limit " + std::to_string(bytes) + " bytes by " + mechanism;
}

// The harness's own RSS: a child forked now starts with up to this much of it.
std::optional<int64_t> own_rss_kb() {
  const auto statm = procfs::read_text("/proc/self/statm");
  const auto pages = statm ? procfs::parse_statm_resident_shared_pages(*statm) : std::nullopt;
  if (!pages) return std::nullopt;
  return pages->first * (sysconf(_SC_PAGESIZE) / 1024);
}

void OneRun::start_and_sample() {
  rec_.harness_rss_at_fork_kb = own_rss_kb();
  start_child();
  while (another_repetition() && open_channels()) start_child();
  if (series_) series_->flush(rec_.samples);
  if (t0_) rec_.wall_ms = std::chrono::duration<double, std::milli>(ended_ - *t0_).count();
  end_.oom = group_->oom_kills() > 0;
  group_->record(rec_);
  record_soak();
}

// The perf counters of each start of a soak's child, added up.
void add_perf(std::map<std::string, Maybe>& total, std::map<std::string, Maybe> more) {
  for (auto& [name, m] : more) {
    auto it = total.find(name);
    if (it == total.end()) total.emplace(name, std::move(m));
    else if (it->second.value && m.value) *it->second.value += *m.value;
  }
}

void add_rusage(rusage& total, const rusage& more) {
  timeradd(&total.ru_utime, &more.ru_utime, &total.ru_utime);
  timeradd(&total.ru_stime, &more.ru_stime, &total.ru_stime);
  total.ru_maxrss = std::max(total.ru_maxrss, more.ru_maxrss);
  total.ru_minflt += more.ru_minflt;
  total.ru_majflt += more.ru_majflt;
  total.ru_nvcsw += more.ru_nvcsw;
  total.ru_nivcsw += more.ru_nivcsw;
}

void OneRun::start_child() {
  if (req_.program) end_.error = ready_port_taken(*req_.program);
  auto child = end_.error.empty() ? Child::start_paused(spec_, end_.error) : std::nullopt;
  channels_->child_started(req_.program != nullptr);
  if (!child) return;
  ++repetitions_;
  interrupt::set_child_group(child->pid());
  // A run that must be held to a limit or a high mark and cannot be is not run.
  if (std::string error; !group_->add(child->pid(), error) && (run_.memory_limit || run_.memory_high)) {
    end_.error = error;
    child->signal_group(SIGKILL);
  }
  PerfCounters perf(child->pid());
  // A program is held at its entry point, where its maps say which
  // allocator it got, even when it lives a millisecond, and at its exit stop,
  // where its VmHWM is its exact peak (once: a soak's program started again is not held).
  std::string no_trace;
  const bool traced = req_.program && repetitions_ == 1 && trace_.attach(child->pid(), no_trace);
  if (!t0_) t0_ = Clock::now();
  const auto t0 = *t0_;
  if (end_.error.empty() && child->resume(end_.error)) {
    execed_ = true;
    if (req_.program) start_driver(child->pid(), repetitions_ == 1 ? t0 : Clock::now(), traced);
    if (driver_ && !repeats_ && run_.soak_s > 0)
      driver_->loop_load_until(t0 + std::chrono::microseconds(static_cast<int64_t>(run_.soak_s * 1e6)));
    sample(*child, t0);
  }
  trace_.detach();
  rusage ru{};
  child->wait(status_, ru);
  ended_ = Clock::now();
  add_rusage(ru_, ru);
  interrupt::set_child_group(0);
  add_perf(rec_.perf, perf.read());
}

bool OneRun::another_repetition() const {
  if (!repeats_ || interrupt::requested() || !end_.error.empty() || !rec_.protocol_errors.empty()) return false;
  if (!t0_ || Clock::now() - *t0_ >= std::chrono::microseconds(static_cast<int64_t>(run_.soak_s * 1e6))) return false;
  if (end_.how == SamplerEnd::Stopped) return true;  // a program stopped after its idle time
  return end_.how == SamplerEnd::Exited && WIFEXITED(status_) && WEXITSTATUS(status_) == end_.expected_exit;
}

void OneRun::record_soak() {
  if (run_.soak_s <= 0) return;
  SoakRecord s;
  s.duration_s = run_.soak_s;
  s.ran_s = rec_.wall_ms / 1000;
  s.repetitions = repetitions_;
  s.loops = driver_ ? driver_->loops() : 0;
  rec_.soak = s;
}

// A program's driver; the program held at its entry when the trace took it there.
void OneRun::start_driver(pid_t pid, Clock::time_point t0, bool traced) {
  driver_.emplace(*req_.program, pid, t0, channels_->take_program_output(), req_.allocator.library,
                  load_box_ ? &*load_box_ : nullptr);
  std::string no_hold;
  if (traced && trace_.run_to_entry(no_hold)) {
    driver_->maps().check();
    if (!req_.program->exit_stop) {
      trace_.leave_at_entry();
      rec_.hwm_kb.reason = "no exit stop (--no-exit-stop)";
    } else if (!trace_.follow_to_exit(no_hold)) {
      rec_.hwm_kb.reason = "no exit stop (" + no_hold + ")";
    }
    driver_->hold(&trace_);
  } else {
    driver_->maps().right_after_exec();
  }
}

void OneRun::sample(const Child& child, Clock::time_point t0) {
  SamplerConfig cfg;
  cfg.pid = child.pid();
  cfg.pidfd = child.pidfd();
  cfg.mark_fd = channels_->mark_read();
  cfg.ack_fd = channels_->ack_write();
  cfg.t0 = t0;
  cfg.stop_fd = interrupt::wake_fd();
  cfg.on_progress = req_.on_progress;
  cfg.tree = req_.program && req_.program->tree;
  cfg.ledger_library = req_.ledger_library;
  cfg.heap_sites = !req_.ledger_library.empty() && req_.run.heap_sample > 0;
  cfg.memory_group = &*group_;
  if (driver_) cfg.driver = &*driver_;
  if (trace_.following()) cfg.trace = &trace_;
  std::string sampler_error;
  cfg.series = series_ ? &*series_ : nullptr;
  end_.how = sample_until_exit(cfg, run_, rec_, sampler_error);
  if (end_.how == SamplerEnd::Error) end_.error = sampler_error;
  if (end_.how != SamplerEnd::Exited) {
    trace_.detach();  // so that it gets the signals that stop it
    stop(child);
  }
}

// A child still running when sampling ended: SIGTERM to its group, SIGKILL
// after the grace.
void OneRun::stop(const Child& child) {
  child.signal_group(SIGTERM);
  if (driver_) driver_->first_sample_taken();  // a program still held gets its SIGTERM
  pollfd p{child.pidfd(), POLLIN, 0};
  if (poll(&p, 1, req_.program ? int(req_.program->stop_grace_s * 1000) : kTermGraceMs) <= 0)
    child.signal_group(SIGKILL);
}

void OneRun::read_end() {
  end_.wait_status = status_;
  if (WIFEXITED(status_) && end_.error.empty()) rec_.exit.code = WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) rec_.exit.signal = WTERMSIG(status_);
  if (execed_) read_rusage(rec_, ru_);
  else rusage_not_measured(rec_, "the process never ran (" + (end_.error.empty() ? "it was not started" : end_.error) + ")");
}

void OneRun::derive_metrics() {
  derive_run_metrics(rec_);
  if (!rec_.hwm_kb.value && rec_.hwm_kb.reason.empty())
    rec_.hwm_kb.reason = req_.program ? "no exit stop was taken (the program was killed, or is not traced); "
                                        "maxrss_kb (wait4) is the kernel's maximum"
                                      : "the workload did not report its VmHWM";
  // The child has ended: its call sites are named from its files now, off its
  // allocation path (before the curve: the growth verdict names a site).
  symbolize_heap_sites(rec_, run_.symbolize);
  compute_curve(rec_, run_.after_mark, req_.declared_after);
}

std::string OneRun::read_output() {
  std::string complaint;
  if (driver_) {
    driver_->finish(rec_);
    complaint = option_complaint(req_.allocator, driver_->head() + "\n" + rec_.output_tail);
    if (auto obstacle = preload_obstacle(req_.program->path); !obstacle.empty()) {
      rec_.allocator.verified = false;
      rec_.allocator.why_unverified = obstacle;
    }
  } else if (channels_->output() >= 0) {
    complaint = option_complaint(req_.allocator, workload_output());
  }
  if (req_.pass_output && !rec_.output_tail.empty()) {
    ssize_t w = write(STDERR_FILENO, rec_.output_tail.data(), rec_.output_tail.size());
    (void)w;
  }
  return complaint;
}

// A workload's output, in its memfd once it is over: the tail into the
// record; returned with the head, where an allocator complains about its
// options at start-up.
std::string OneRun::workload_output() {
  const int fd = channels_->output();
  rec_.output_tail = escape::shown_tail(tail_of(fd, 4096), 4096);
  std::string head(4096, '\0');
  ssize_t n = pread(fd, head.data(), head.size(), 0);
  head.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return head + "\n" + rec_.output_tail;
}

void OneRun::end_leftovers() {
  const std::pair<std::optional<Containment>*, const char*> boxes[] = {{&box_, "program"},
                                                                       {&load_box_, "load generator"}};
  for (auto [box, from] : boxes) {
    if (!*box) continue;
    for (auto& p : (*box)->members()) {
      p.from = from;
      rec_.leftover_processes.push_back(std::move(p));
    }
    if (req_.run.leftovers == Leftovers::Allow) (*box)->release();
    else (*box)->kill();
  }
  end_.fail_on_leftovers = req_.run.leftovers == Leftovers::Fail;
}

RunRecord OneRun::judged(const std::string& complaint) {
  judge(rec_, end_, req_.declared_metrics);
  if (rec_.status == Status::Ok && !complaint.empty()) {
    rec_.status = Status::Failed;
    rec_.exit.error = "the allocator rejected its options: " + complaint;
  }
  if (rec_.soak) {
    rec_.soak->complete = rec_.status == Status::Ok;
    if (!rec_.soak->complete)
      rec_.soak->incomplete_why = fmt::format("{} after {:.1f} s of {:.1f} s: {}", status_name(rec_.status),
                                              rec_.soak->ran_s, rec_.soak->duration_s, rec_.exit.error);
  }
  return std::move(rec_);
}

RunRecord OneRun::judged_early() {
  end_.fail_on_leftovers = req_.run.leftovers == Leftovers::Fail;
  rusage_not_measured(rec_, "the process was not started" + (end_.error.empty() ? "" : " (" + end_.error + ")"));
  judge(rec_, end_);
  return std::move(rec_);
}

}  // namespace

RunRecord run_one(const RunRequest& req) {
  OneRun run(req);
  if (!run.prepare()) return run.judged_early();
  run.start_and_sample();
  run.read_end();
  run.derive_metrics();
  const std::string complaint = run.read_output();
  run.end_leftovers();
  return run.judged(complaint);
}

}  // namespace mh
