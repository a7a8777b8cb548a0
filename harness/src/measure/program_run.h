// The sampling loop's driver for a program run (see SamplerDriver): reads the
// program's output line by line (marks on output, readiness), marks at fixed
// times, starts the load generator once the program is ready, stops the
// program after its idle time, and checks its memory map now and then. The
// load generator is started by the harness, not by the program: it is no
// descendant of the measured process, so neither the program's perf counters
// (inherit) nor its wait4 rusage nor its /proc samples count it. Main thread
// only (the harness starts no threads), one run at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sys/pattern.h"
#include "measure/program_trace.h"
#include "measure/maps_check.h"
#include "inputs/program.h"
#include "measure/sampler.h"
#include "sys/containment.h"
#include "sys/spawn.h"

namespace mh {

// Runs the program's set-up (Program::setup_argv) in `dir` to completion,
// within timeout_s, and records its command, wall time and exit status in
// rec.data["setup"]. False with the reason when it did not exit 0.
bool run_setup(const Program& p, const std::string& dir, double timeout_s, RunRecord& rec, std::string& error);

// Whether something accepts a TCP connection on 127.0.0.1:port now.
bool loopback_port_accepts(int port);

// A TCP port of 127.0.0.1 free now (the kernel's choice), for a program with
// ready_port "auto"; 0 when none could be had.
int free_loopback_port();

// "" or why the program cannot be started: its --ready-port already accepts
// connections (another server, or one a run left behind), so its readiness
// and its load would reach that one, not the program measured.
std::string ready_port_taken(const Program& p);

class ProgramDriver : public SamplerDriver {
 public:
  // `output_fd`: the read end of the program's stdout+stderr (taken over);
  // `load_box`: where the load generator starts (the runner's, which names
  // and kills what it leaves).
  ProgramDriver(const Program& p, int pid, Clock::time_point t0, int output_fd, const std::string& library,
                Containment* load_box);
  ~ProgramDriver() override;

  MapsWatch& maps() { return maps_; }
  // A program held at its entry: released after the first sample.
  void hold(ProgramTrace* trace) { held_ = trace; }
  void first_sample_taken() override {
    if (held_) held_->release();
    held_ = nullptr;
  }
  // --soak: the load generator is run again each time it ends well, until
  // `until`; the program idles and is stopped after the last run.
  void loop_load_until(Clock::time_point until) { loop_until_ = until; }
  // Runs of the load generator that ended so far.
  int64_t loops() const { return loops_; }
  // Called by the sampler: see SamplerDriver.
  std::vector<int> watch_fds() const override;
  std::vector<std::string> step(Clock::time_point now, bool alive) override;
  Clock::time_point next_wake() const override;
  std::optional<SamplerEnd> end(std::string& error) const override;
  // Once the program was reaped: stops a load generator still running, and
  // writes the output tail, the load generator's figures and metrics and the
  // allocator verdict into the record.
  void finish(RunRecord& rec);
  // The first and last 4 KiB of the program's output (an allocator complains
  // about its options at the start).
  std::string head() const { return head_; }

 private:
  struct Stream {
    int fd = -1;
    std::string partial, head, tail;
  };
  // Reads what is there; calls on_line for each whole line.
  template <class F>
  void drain(Stream& s, F on_line);
  // The steps of step(): the output's marks (true when it said the program
  // is ready), readiness by output or port (and what follows it: the load or
  // the idle time), the load generator's output and its end.
  bool read_output(std::vector<std::string>& marks);
  void update_readiness(Clock::time_point now, bool became_ready, std::vector<std::string>& marks);
  void start_load(Clock::time_point now, std::vector<std::string>& marks);
  void watch_load(Clock::time_point now, std::vector<std::string>& marks);
  void load_ended(Clock::time_point now, std::vector<std::string>& marks);
  // Reaps the load generator: its figures added to the record's (a soak runs it again).
  int reap_load();

  const Program& p_;
  Clock::time_point t0_;
  MapsWatch maps_;
  ProgramTrace* held_ = nullptr;
  Stream out_;
  std::string head_;
  std::vector<Pattern> output_regexes_;
  std::optional<Pattern> ready_regex_;
  std::vector<Pattern> load_regexes_;  // one per load metric, in its order
  size_t next_timed_ = 0;
  std::vector<TimedMark> timed_;
  bool ready_ = false;
  Clock::time_point next_port_try_, next_maps_;
  std::optional<Clock::time_point> stop_at_;
  std::string error_;
  bool stopped_ = false;
  // The load generator.
  Containment* load_box_;
  std::optional<Child> load_;
  Stream load_out_;
  Clock::time_point load_start_;
  Json load_record_ = Json::object();
  std::optional<Clock::time_point> loop_until_;
  int64_t loops_ = 0;
};

}  // namespace mh
