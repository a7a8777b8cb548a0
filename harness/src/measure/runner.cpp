// run_one: spawn -> sample -> record (see runner.h).
#include "measure/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <cstring>
#include <filesystem>

#include "core/curve.h"
#include "core/run_metrics.h"
#include "measure/entry_stop.h"
#include "sys/interrupt.h"
#include "measure/memory_limit.h"
#include "measure/perf.h"
#include "measure/program_run.h"
#include "measure/sampler.h"
#include "sys/spawn.h"

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

std::string canonical(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::canonical(path, ec);
  return ec ? path : p.string();
}

}  // namespace

void judge(RunRecord& rec, const RunEnd& end, const std::vector<std::string>& declared_metrics) {
  std::string missing;
  for (const auto& m : declared_metrics)
    if (!rec.workload_metrics.count(m)) missing += (missing.empty() ? "" : ", ") + m;
  auto& a = rec.allocator;
  if (a.verified_by == "probe") {
    a.verified = !a.identified.empty() && a.identified == (a.family == "custom" ? a.identified : a.family);
    if (a.verified && !a.library.empty()) a.verified = canonical(a.served_by) == canonical(a.library);
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
  } else if (rec.samples.empty()) {
    rec.status = Status::Failed;
    rec.exit.error = "no sample of the process could be read" +
                     (rec.sampler.unreadable.count("rss_kb") ? ": " + rec.sampler.unreadable.at("rss_kb") : "");
  } else if (!rec.protocol_errors.empty()) {
    rec.status = Status::Failed;
    rec.exit.error = "marks out of step: " + rec.protocol_errors.front();
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

}  // namespace

RunRecord run_one(const RunRequest& req) {
  RunRecord rec;
  rec.workload = req.workload;
  rec.params = req.params;
  rec.repetition = req.repetition;
  rec.allocator.name = req.allocator.label;
  rec.allocator.family = req.allocator.family;
  rec.allocator.library = req.allocator.library;
  rec.allocator.env = req.allocator.env;
  rec.allocator.verified_by = req.program ? "maps" : "probe";

  RunEnd end;
  RunTempDir tmp(req.tmp_parent);
  if (!tmp.error().empty()) {
    end.error = tmp.error();
    judge(rec, end);
    return rec;
  }
  // A program's set-up makes its inputs, unmeasured, where it will run.
  const bool set_up = req.program && !req.program->setup_argv.empty();
  const std::string program_cwd = !req.program ? "" : set_up && req.program->cwd.empty() ? tmp.path() : req.program->cwd;
  if (set_up && !run_setup(*req.program, program_cwd, req.run.timeout_s, rec, end.error)) {
    if (interrupt::requested()) {
      end.error.clear();
      end.how = SamplerEnd::Interrupted;
    }
    judge(rec, end);
    return rec;
  }
  int marks[2], acks[2];
  if (pipe2(marks, O_CLOEXEC) < 0 || pipe2(acks, O_CLOEXEC) < 0) {
    end.error = std::string("pipe: ") + std::strerror(errno);
    judge(rec, end);
    return rec;
  }
  fcntl(marks[0], F_SETFL, O_NONBLOCK);
  // A workload's output is read once it is over; a program's as it comes
  // (marks on output, readiness), through a pipe.
  int output = -1, program_output = -1;
  if (!req.program) {
    output = memfd_create("workload-output", MFD_CLOEXEC);
  } else if (int p[2]; pipe2(p, O_CLOEXEC) == 0) {
    program_output = p[0];
    output = p[1];
    fcntl(program_output, F_SETFL, O_NONBLOCK);
  }

  ChildSpec spec;
  spec.path = req.binary;
  spec.argv.push_back(req.binary);
  spec.argv.insert(spec.argv.end(), req.args.begin(), req.args.end());
  spec.env = clean_environment();
  int program_stdin = -1;
  if (req.program) {
    spec.path = req.program->path;
    spec.argv = req.program->argv;
    spec.cwd = program_cwd;
    for (const auto& [k, v] : req.program->env) spec.env[k] = v;
    const std::string in = req.program->stdin_path.empty() ? "/dev/null" : req.program->stdin_path;
    spec.stdin_fd = program_stdin = ::open(in.c_str(), O_RDONLY | O_CLOEXEC);
    end.expected_exit = req.program->expect_exit;
  }
  for (const auto& [k, v] : req.allocator.env) spec.env[k] = v;
  if (!req.allocator.library.empty()) spec.env["LD_PRELOAD"] = req.allocator.library;
  spec.env["MEMHARNESS_MARK_FD"] = std::to_string(marks[1]);
  spec.env["MEMHARNESS_ACK_FD"] = std::to_string(acks[0]);
  spec.env["TMPDIR"] = tmp.path();
  spec.inherit_fds = {marks[1], acks[0]};
  spec.output_fd = output;

  // The memory limit: a cgroup of the run's own, else RLIMIT_AS.
  std::optional<MemoryCgroup> cgroup;
  if (req.run.memory_limit > 0) {
    cgroup.emplace(req.run.memory_limit, std::filesystem::path(tmp.path()).filename().string());
    std::string note;
    if (!cgroup->ok()) {
      spec.rlimit_as = req.run.memory_limit;
      note = "no memory cgroup could be made (" + cgroup->why() +
             "): RLIMIT_AS limits address space, not resident memory, and an allocation past it fails "
             "instead of being killed";
    }
    rec.memory_limit = memory_limit_json(req.run.memory_limit, cgroup->ok() ? cgroup->mechanism() : "RLIMIT_AS", note);
    end.limit_note = "--memory-limit " + std::to_string(req.run.memory_limit) + " bytes by " +
                     (cgroup->ok() ? cgroup->mechanism() : std::string("RLIMIT_AS"));
  }

  int status = 0;
  rusage ru{};
  auto child = Child::start_paused(spec, end.error);
  close(marks[1]);
  close(acks[0]);
  if (req.program) {
    if (program_stdin >= 0) close(program_stdin);
    if (output >= 0) close(output);  // the program holds the write end
    output = -1;
  }
  std::optional<ProgramDriver> driver;
  if (child) {
    interrupt::set_child_group(child->pid());
    if (cgroup && cgroup->ok() && !cgroup->add(child->pid(), end.error)) child->signal_group(SIGKILL);
    PerfCounters perf(child->pid());
    // A program is held at its entry point, where its maps say which
    // allocator it got, even when it lives a millisecond.
    EntryStop entry;
    std::string no_hold;
    const bool traced = req.program && entry.attach(child->pid(), no_hold);
    const auto t0 = Clock::now();
    if (end.error.empty() && child->resume(end.error)) {
      if (req.program) {
        driver.emplace(*req.program, child->pid(), t0, program_output, req.allocator.library);
        program_output = -1;
        if (traced && entry.run_to_entry(no_hold)) {
          driver->maps().check();
          entry.leave_stopped();
          driver->hold(entry);
        } else {
          driver->maps().right_after_exec();
        }
      }
      SamplerConfig cfg;
      cfg.pid = child->pid();
      cfg.pidfd = child->pidfd();
      cfg.mark_fd = marks[0];
      cfg.ack_fd = acks[1];
      cfg.t0 = t0;
      cfg.stop_fd = interrupt::wake_fd();
      cfg.on_progress = req.on_progress;
      cfg.tree = req.program && req.program->tree;
      if (driver) cfg.driver = &*driver;
      std::string sampler_error;
      end.how = sample_until_exit(cfg, req.run, rec, sampler_error);
      if (end.how == SamplerEnd::Error) end.error = sampler_error;
      if (end.how != SamplerEnd::Exited) {
        child->signal_group(SIGTERM);
        if (driver) driver->first_sample_taken();  // a program still held gets its SIGTERM
        pollfd p{child->pidfd(), POLLIN, 0};
        if (poll(&p, 1, req.program ? int(req.program->stop_grace_s * 1000) : kTermGraceMs) <= 0)
          child->signal_group(SIGKILL);
      }
    }
    child->wait(status, ru);
    rec.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    child->signal_group(SIGKILL);  // whatever the workload left running in its group
    interrupt::set_child_group(0);
    rec.perf = perf.read();
    end.oom = cgroup && cgroup->oom_kills() > 0;
  }
  close(marks[0]);
  close(acks[1]);
  if (program_output >= 0) close(program_output);
  end.wait_status = status;

  if (WIFEXITED(status) && end.error.empty()) rec.exit.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) rec.exit.signal = WTERMSIG(status);
  rec.maxrss_kb = ru.ru_maxrss;
  rec.minflt = ru.ru_minflt;
  rec.majflt = ru.ru_majflt;
  rec.utime_ms = double(ru.ru_utime.tv_sec) * 1e3 + double(ru.ru_utime.tv_usec) / 1e3;
  rec.stime_ms = double(ru.ru_stime.tv_sec) * 1e3 + double(ru.ru_stime.tv_usec) / 1e3;
  rec.vol_ctxsw = ru.ru_nvcsw;
  rec.invol_ctxsw = ru.ru_nivcsw;
  derive_run_metrics(rec);
  if (!rec.hwm_kb.value && rec.hwm_kb.reason.empty())
    rec.hwm_kb.reason = req.program ? "a program does not report its VmHWM; maxrss_kb (wait4) is the kernel's maximum"
                                    : "the workload did not report its VmHWM";
  compute_curve(rec, req.run.after_mark, req.declared_after);
  std::string complaint;
  if (driver) {
    driver->finish(rec);
    complaint = option_complaint(req.allocator, driver->head() + "\n" + rec.output_tail);
    if (auto obstacle = preload_obstacle(req.program->path); !obstacle.empty()) {
      rec.allocator.verified = false;
      rec.allocator.why_unverified = obstacle;
    }
  } else if (output >= 0) {
    rec.output_tail = tail_of(output, 4096);
    // An allocator complains about its options at start-up, before the tail.
    std::string head(4096, '\0');
    ssize_t n = pread(output, head.data(), head.size(), 0);
    head.resize(n > 0 ? static_cast<size_t>(n) : 0);
    complaint = option_complaint(req.allocator, head + "\n" + rec.output_tail);
    close(output);
  }
  if (req.pass_output && !rec.output_tail.empty()) {
    ssize_t w = write(STDERR_FILENO, rec.output_tail.data(), rec.output_tail.size());
    (void)w;
  }
  judge(rec, end, req.declared_metrics);
  if (rec.status == Status::Ok && !complaint.empty()) {
    rec.status = Status::Failed;
    rec.exit.error = "the allocator rejected its options: " + complaint;
  }
  return rec;
}

}  // namespace mh
