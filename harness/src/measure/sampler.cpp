// The sampling loop and the harness side of the mark protocol (see sampler.h).
#include "measure/sampler.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "measure/memory_group.h"
#include "measure/proc_tree.h"
#include "measure/run_bounds.h"
#include "sys/child_signal.h"
#include "sys/json_read.h"
#include "sys/procfs.h"
#include "core/stats.h"

namespace mh {

namespace {

using Clock = std::chrono::steady_clock;

// Shortest gap between two periodic reads of /proc/PID/stat (faults, CPU time,
// threads): see ProcReader::sample. Marks always read it.
constexpr auto kStatGap = std::chrono::milliseconds(50);

// Shortest gap between two searches for a program's descendants (a file per
// thread of each, or every process's stat where the kernel has no children
// files): the ones found are sampled every time, a process that lives less
// than this may be missed. Marks always search.
constexpr auto kTreeGap = std::chrono::milliseconds(50);

double ms_since(Clock::time_point t0, Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t - t0).count();
}

// Threads seen so far; a thread keeps its last reading after it ends.
void merge_threads(std::map<int, ThreadStat>& seen, std::vector<ThreadStat> now) {
  for (auto& t : now) seen[t.tid] = std::move(t);
}

}  // namespace

bool write_ack(int fd, uint32_t seq) {
  ssize_t w;
  do w = write(fd, &seq, sizeof seq);
  while (w < 0 && errno == EINTR);
  return w == sizeof seq;
}

namespace {

Maybe metric_from(const JsonIn& m) {
  Maybe v;
  v.value = m.number_or_null("value", -std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
  if (!v.value) v.reason = m.string_or("reason", "the workload reported no value");
  // "above": the figure is more than this (a time that never came within the run).
  if (!v.value) v.above = m.number_or_null("above", 0, std::numeric_limits<double>::max());
  return v;
}

// One message into the record, by the key that says what it is. Every field
// is checked before anything is stored: a bad message changes nothing.
void apply_checked(const JsonIn& m, RunRecord& rec) {
  if (auto mark = m.find("mark")) mark->string();
  m.integer_or("seq", 0, 0, std::numeric_limits<uint32_t>::max());
  m.boolean_or("sync", false);
  if (auto metric = m.find("metric")) {
    const std::string name = metric->string();
    rec.workload_metrics[name] = metric_from(m);
  } else if (auto a = m.find("allocator")) {
    AllocatorRecord seen;
    seen.version = a->string_or("version", "");
    seen.served_by = a->string_or("library", "");
    seen.identified = a->string_or("name", "");
    rec.allocator.version = seen.version;
    rec.allocator.served_by = seen.served_by;
    rec.allocator.identified = seen.identified;
  } else if (auto stats = m.find("allocator_stats")) {
    rec.allocator_stats = stats->json();
  } else if (auto data = m.find("data")) {
    const std::string key = data->at("key").string();
    rec.data[key] = data->find("value") ? data->at("value").json() : Json();
  } else if (auto error = m.find("error")) {
    rec.protocol_errors.push_back(error->string());
  } else if (auto hwm = m.find("hwm_kb")) {
    // Negative: the workload could not read its VmHWM.
    const int64_t kb = hwm->integer(-kMaxKb, kMaxKb);
    if (kb >= 0) rec.hwm_kb.value = static_cast<double>(kb);
    else rec.hwm_kb.reason = "the workload could not read its VmHWM";
  }
}

}  // namespace

std::optional<Json> apply_message(const std::string& line, RunRecord& rec, std::string& error, RunBudget* budget) {
  static const std::string kWhat = "message";
  auto m = parse_json(line, kWhat, kLineLimits, error);
  if (!m) return std::nullopt;
  // A message past the budget is checked on a record of its own, then let go.
  RunRecord unkept;
  RunRecord& into = !budget || budget->admit_message(*m, line.size()) ? rec : unkept;
  const auto applied = read_checked<bool>(
      [&] {
        apply_checked(JsonIn(*m, kWhat), into);
        return true;
      },
      error);
  if (!applied) return std::nullopt;
  return m;
}

namespace {

// One run's sampling: the loop and what it keeps between wake-ups. Built and
// run once by sample_until_exit.
class Sampler {
 public:
  Sampler(const SamplerConfig& cfg, const RunSettings& settings, RunRecord& rec);
  SamplerEnd run(std::string& error);

 private:
  // Until the child exits, the time is up, the harness is asked to stop or
  // the driver ends it.
  SamplerEnd loop(std::string& error);
  // The periodic sample when it is due, and the threads every 500 ms.
  void sample_on_schedule(Clock::time_point now);
  // Sleeps until the next thing to do or a descriptor is readable, and takes
  // in the mark lines that came. Error or Interrupted when sampling must end.
  std::optional<SamplerEnd> wait_for_events(std::string& error);
  Clock::time_point next_wake() const;
  // Reads the process (and its descendants): a mark's reading with status
  // and smaps_rollup, a periodic one with them only when due. Keeps its cost.
  bool take(Sample& s, bool at_mark);
  // The memory group's columns of a sample (its charge, its stall so far).
  void read_group(Sample& s);
  void add_mark(const std::string& name, Clock::time_point received, bool process_alive);
  void merge_all_threads();
  // The driver's marks after a wake-up (and once after the child exited).
  void drive(bool alive);
  void take_exit_reading();
  // The ledger's peak snapshot, read at every mark and at the exit stop: the
  // last read stands (the process may be gone at the next).
  void read_peak_sites();
  void drain_marks(bool process_alive);
  // Takes in what the workload wrote; true when it stopped at the line limit
  // with more perhaps waiting.
  bool read_marks();
  // Applies each whole line the workload sent: its mark, its sequence
  // number, its acknowledgement.
  void handle_lines(bool process_alive);
  void check_sequence(const Json& m, uint32_t seq);
  // A message that is not valid, or an acknowledgement that cannot be
  // written: the run's protocol error, and the end of its sampling.
  void protocol_failure(const std::string& why);
  // The sampler's own figures into rec.sampler, and the threads seen.
  void record_statistics();
  // Why cells are null; a column null in every sample is unreadable as a whole.
  void record_null_cells();

  const SamplerConfig& cfg_;
  const RunSettings& settings_;
  RunRecord& rec_;
  procfs::ProcReader proc_;
  std::optional<procfs::ProcTree> tree_;
  int64_t processes_max_ = 1;
  uint32_t last_seq_ = 0;
  std::map<int, ThreadStat> threads_;
  std::vector<double> costs_us_, gaps_ms_, smaps_costs_us_;
  // smaps_rollup walks every page table with the workload's mmap lock held
  // (5 ms at 470 MB), stalling its mmap and munmap for that long: periodic
  // reads only when asked for.
  const bool periodic_smaps_;
  const std::chrono::microseconds smaps_interval_, interval_;
  const Clock::time_point deadline_;
  Clock::time_point next_smaps_, next_stat_, next_tree_, next_, next_threads_, next_progress_;
  double last_periodic_ms_ = -1;
  Sample last_{};
  bool have_last_ = false;
  std::string pending_;  // received, not yet a whole line
  std::string fatal_;    // the protocol failure that ends the run ("" while there is none)
  bool mark_open_;
  bool exited_ = false;
  RunBudget budget_;  // what the program sends, kept within settings.bounds
  std::map<std::string, std::string> group_null_cells_;  // without a memory group: why its columns are null
};

std::chrono::microseconds micros(double ms) { return std::chrono::microseconds(static_cast<int64_t>(ms * 1000)); }

Sampler::Sampler(const SamplerConfig& cfg, const RunSettings& settings, RunRecord& rec)
    : cfg_(cfg),
      settings_(settings),
      rec_(rec),
      proc_(cfg.pid, cfg.proc_root, cfg.tree),
      periodic_smaps_(settings.smaps_ms > 0),
      smaps_interval_(micros(settings.smaps_ms)),
      interval_(micros(settings.sample_ms)),
      deadline_(cfg.t0 + std::chrono::microseconds(static_cast<int64_t>(settings.timeout_s * 1e6))),
      mark_open_(cfg.mark_fd >= 0),
      budget_(settings.bounds, rec) {
  if (!cfg.ledger_library.empty()) proc_.use_ledger(cfg.ledger_library);
  if (cfg.tree) tree_.emplace(cfg.pid, cfg.proc_root, cfg.ledger_library);
  rec_.sampler.unreadable = proc_.unreadable();
  next_smaps_ = next_stat_ = next_tree_ = Clock::now();
  next_ = next_threads_ = next_progress_ = Clock::now();
}

SamplerEnd Sampler::run(std::string& error) {
  const SamplerEnd end = loop(error);
  // What the workload wrote just before it exited.
  drain_marks(false);
  if (cfg_.driver && end == SamplerEnd::Exited) drive(false);
  record_statistics();
  return end;
}

SamplerEnd Sampler::loop(std::string& error) {
  for (;;) {
    const auto now = Clock::now();
    if (now >= next_) sample_on_schedule(now);
    // On its own clock: a long --sample-ms must not freeze the progress line.
    if (cfg_.on_progress && now >= next_progress_) {
      cfg_.on_progress(ms_since(cfg_.t0, now), rec_.marks.empty() ? std::string() : rec_.marks.back().name);
      next_progress_ = now + std::chrono::milliseconds(500);
    }
    if (now >= deadline_) return SamplerEnd::TimedOut;
    if (auto end = wait_for_events(error)) return *end;
    if (exited_) return SamplerEnd::Exited;
    if (cfg_.driver) {
      drive(true);
      std::string why;
      if (auto end = cfg_.driver->end(why)) {
        if (*end == SamplerEnd::Error) error = why;
        return *end;
      }
    }
  }
}

void Sampler::sample_on_schedule(Clock::time_point now) {
  Sample s;
  if (take(s, false)) {
    if (last_periodic_ms_ >= 0) gaps_ms_.push_back(s.t_ms - last_periodic_ms_);
    last_periodic_ms_ = s.t_ms;
  }
  if (cfg_.driver && costs_us_.size() == 1) cfg_.driver->first_sample_taken();
  next_ += interval_;
  if (next_ <= now) next_ = now + interval_;  // we fell behind: do not burst to catch up
  if (now >= next_threads_) {
    merge_all_threads();
    next_threads_ = now + std::chrono::milliseconds(500);
  }
}

Clock::time_point Sampler::next_wake() const {
  auto wake = std::min(next_, deadline_);
  if (cfg_.on_progress) wake = std::min(wake, next_progress_);
  if (cfg_.driver) wake = std::min(wake, cfg_.driver->next_wake());
  return wake;
}

std::optional<SamplerEnd> Sampler::wait_for_events(std::string& error) {
  const auto ns = std::max<int64_t>(
      0, std::chrono::duration_cast<std::chrono::nanoseconds>(next_wake() - Clock::now()).count());
  timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  const bool traced = cfg_.trace && cfg_.trace->following();
  std::vector<pollfd> fds = {{cfg_.pidfd, POLLIN, 0},
                             {mark_open_ ? cfg_.mark_fd : -1, POLLIN, 0},
                             {cfg_.stop_fd, POLLIN, 0},
                             {traced ? child_signal_fd() : -1, POLLIN, 0}};
  if (cfg_.driver)
    for (int fd : cfg_.driver->watch_fds()) fds.push_back({fd, POLLIN, 0});
  const int r = ppoll(fds.data(), fds.size(), &ts, nullptr);
  if (r < 0 && errno != EINTR) {
    error = std::string("ppoll: ") + std::strerror(errno);
    return SamplerEnd::Error;
  }
  if (r > 0 && (fds[2].revents & POLLIN)) return SamplerEnd::Interrupted;
  if (r > 0 && (fds[1].revents & (POLLIN | POLLHUP))) {
    read_marks();
    handle_lines(true);
    if (!fatal_.empty()) {
      error = "mark protocol: " + fatal_;
      return SamplerEnd::Error;
    }
  }
  if (r > 0 && (fds[3].revents & POLLIN) && cfg_.trace->service()) take_exit_reading();
  if (traced && cfg_.trace->signal_heavy()) {
    cfg_.trace->detach();
    rec_.hwm_kb.reason = fmt::format(
        "no exit stop: given up after the program took more than {} signals in a second (each a round trip "
        "through the harness)",
        ProgramTrace::kSignalHeavy);
  }
  if (r > 0 && (fds[0].revents & POLLIN)) exited_ = true;
  return std::nullopt;
}

// The program held at its exit stop, its memory still its own: the marks it
// sent last, then a last sample and the VmHWM of its last phase, which no
// periodic sample may have seen.
// Everything the workload has written so far, whole lines applied.
void Sampler::drain_marks(bool process_alive) {
  while (mark_open_ && read_marks() && fatal_.empty()) handle_lines(process_alive);
  handle_lines(process_alive);
}

void Sampler::take_exit_reading() {
  drain_marks(true);
  Sample s;
  if (take(s, true) && proc_.last_hwm_kb()) {
    rec_.hwm_kb.value = static_cast<double>(*proc_.last_hwm_kb());
    rec_.hwm_at_exit_stop = true;
  }
  read_peak_sites();
  cfg_.trace->let_exit();
}

void Sampler::read_peak_sites() {
  if (!cfg_.heap_sites) return;
  auto peak = proc_.heap_sites_peak();
  for (const auto& why : proc_.heap_sites_refused()) budget_.refuse_sites(why);
  if (peak) rec_.heap_sites_peak = std::move(peak);
}

// The frames (and sites) a mark's call sites keep: what the budget counts.
size_t frames_in(const HeapSites& h) {
  size_t n = h.top.size();
  for (const auto& s : h.top) n += s.frames.size();
  return n;
}

bool Sampler::take(Sample& s, bool at_mark) {
  const auto a = Clock::now();
  const bool with_smaps = at_mark || (periodic_smaps_ && a >= next_smaps_);
  // status only at marks: statm already gives RSS and its anonymous part.
  const bool with_stat = at_mark || a >= next_stat_;
  if (with_stat) next_stat_ = a + kStatGap;
  const bool ok = proc_.sample(s, with_smaps, at_mark, with_stat);
  if (ok && tree_) {
    if (at_mark || a >= next_tree_) {
      tree_->discover();
      next_tree_ = a + kTreeGap;
    }
    processes_max_ =
        std::max<int64_t>(processes_max_, 1 + tree_->add_descendants(s, with_smaps, at_mark, with_stat));
  }
  if (ok) read_group(s);
  const auto b = Clock::now();
  s.t_ms = ms_since(cfg_.t0, a);
  const double cost_us = std::chrono::duration<double, std::micro>(b - a).count();
  costs_us_.push_back(cost_us);
  if (with_smaps) {
    smaps_costs_us_.push_back(cost_us);
    next_smaps_ = a + smaps_interval_;
  }
  if (ok) {
    last_ = s;
    have_last_ = true;
    if (cfg_.series) cfg_.series->add(rec_.samples, s);
    else rec_.samples.push_back(s);
  }
  return ok;
}

void Sampler::read_group(Sample& s) {
  if (cfg_.memory_group) return cfg_.memory_group->sample(s);
  for (const char* column : {"cgroup_kb", "psi_some_ms", "psi_full_ms"}) {
    s.missing |= column_bit(column);
    group_null_cells_.emplace(column, "the run was sampled without a memory group of its own");
  }
}

void Sampler::add_mark(const std::string& name, Clock::time_point received, bool process_alive) {
  if (!budget_.admit_mark(name)) return;
  Mark mk;
  mk.name = name;
  Sample s;
  if (process_alive && take(s, true)) {
    mk.sample = s;
    // The peak of the phase that ends here, then a fresh peak for the next.
    mk.hwm_kb = proc_.last_hwm_kb();
    mk.hwm_reset = cfg_.reset_hwm && proc_.reset_hwm();
    mk.not_malloc = proc_.not_malloc();
    if (cfg_.heap_sites) {
      auto sites = proc_.heap_sites_and_peak();
      for (const auto& why : proc_.heap_sites_refused()) budget_.refuse_sites(why);
      if (sites.live && budget_.admit_sites(frames_in(*sites.live))) mk.heap_sites = std::move(sites.live);
      if (sites.peak) rec_.heap_sites_peak = std::move(sites.peak);
    }
    merge_all_threads();
  } else if (have_last_) {
    mk.sample = last_;
  }
  mk.t_ms = ms_since(cfg_.t0, received);
  if (cfg_.on_progress) cfg_.on_progress(mk.t_ms, mk.name);
  rec_.marks.push_back(std::move(mk));
}

void Sampler::merge_all_threads() {
  merge_threads(threads_, proc_.threads());
  if (tree_) merge_threads(threads_, tree_->threads());
}

void Sampler::drive(bool alive) {
  const auto now = Clock::now();
  for (const auto& name : cfg_.driver->step(now, alive)) add_mark(name, now, alive);
}

bool Sampler::read_marks() {
  char buf[4096];
  for (;;) {
    // A program that writes without a newline fills pending_ only up to the
    // line limit: handle_lines takes the whole lines and refuses a longer one.
    if (pending_.size() > kLineLimits.max_bytes) return true;
    const ssize_t n = read(cfg_.mark_fd, buf, sizeof buf);
    if (n > 0) {
      pending_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) mark_open_ = false;
    else if (errno == EINTR) continue;
    return false;  // EAGAIN: nothing more for now
  }
}

void Sampler::handle_lines(bool process_alive) {
  size_t eol;
  while (fatal_.empty() && (eol = pending_.find('\n')) != std::string::npos) {
    const std::string line = pending_.substr(0, eol);
    pending_.erase(0, eol + 1);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto received = Clock::now();
    std::string error;
    const auto m = apply_message(line, rec_, error, &budget_);
    if (!m) return protocol_failure(error);
    const uint32_t seq = m->contains("seq") ? (*m)["seq"].get<uint32_t>() : 0;
    check_sequence(*m, seq);
    if (m->contains("mark")) add_mark((*m)["mark"].get<std::string>(), received, process_alive);
    if (m->value("sync", false) && cfg_.ack_fd >= 0 && !write_ack(cfg_.ack_fd, seq))
      return protocol_failure(fmt::format("the acknowledgement of message {} could not be written: {}",
                                          seq, std::strerror(errno)));
  }
  if (pending_.size() > kLineLimits.max_bytes)
    protocol_failure(fmt::format("a line longer than {} bytes", kLineLimits.max_bytes));
}

void Sampler::protocol_failure(const std::string& why) {
  rec_.protocol_errors.push_back(why);
  fatal_ = why;
  mark_open_ = false;  // nothing more is read from a program that broke the protocol
  pending_.clear();
}

// Synchronous messages count 1, 2, 3...: a gap or a repeat means the workload
// went on past a message (a mark) the harness had not answered.
void Sampler::check_sequence(const Json& m, uint32_t seq) {
  if (seq == 0) return;
  if (seq != last_seq_ + 1) {
    // The mark's name as far as a person reads it, cut before a character, not inside one.
    std::string name = m.contains("mark") ? json_text(m["mark"]) : std::string();
    if (name.size() > 80) {
      size_t cut = 76;
      while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
      name = name.substr(0, cut) + "...\"";
    }
    std::string why = "message " + name + " has sequence number " + std::to_string(seq) + ", expected " +
                      std::to_string(last_seq_ + 1);
    if (budget_.admit_message(Json{{"error", why}}, why.size())) rec_.protocol_errors.push_back(std::move(why));
  }
  last_seq_ = seq;
}

void Sampler::record_statistics() {
  for (auto& [tid, t] : threads_) rec_.threads.push_back(t);
  auto& st = rec_.sampler;
  st.interval_ms = settings_.sample_ms;
  st.smaps_ms = settings_.smaps_ms;
  st.count += static_cast<int64_t>(costs_us_.size());
  if (!costs_us_.empty()) {
    st.cost_us_median = stats::median(costs_us_);
    st.cost_us_max = *std::max_element(costs_us_.begin(), costs_us_.end());
  }
  if (!gaps_ms_.empty()) st.achieved_ms = stats::median(gaps_ms_);
  st.smaps_reads += static_cast<int64_t>(smaps_costs_us_.size());
  if (cfg_.series) {
    st.series_bound = cfg_.series->bound();
    st.series_halvings = cfg_.series->halvings();
  }
  if (!smaps_costs_us_.empty()) st.smaps_cost_us_median = stats::median(smaps_costs_us_);
  st.hwm_reset_error = proc_.reset_error();
  record_null_cells();
  if (tree_) {
    st.tree = true;
    st.tree_found_by = tree_->how();
    st.processes_max = processes_max_;
  }
}

void Sampler::record_null_cells() {
  auto& st = rec_.sampler;
  st.null_cells = proc_.null_cells();
  if (tree_)
    for (const auto& [column, why] : tree_->null_cells()) st.null_cells.emplace(column, why);
  for (const auto& [column, why] : cfg_.memory_group ? cfg_.memory_group->null_cells() : group_null_cells_)
    st.null_cells.emplace(column, why);
  for (auto it = st.null_cells.begin(); it != st.null_cells.end();) {
    const std::string &column = it->first, &why = it->second;  // a lambda captures these, not a binding
    const auto lacks = [&](const Sample& s) { return cell_missing(s, column); };
    const bool everywhere = std::all_of(rec_.samples.begin(), rec_.samples.end(), lacks) &&
                            std::all_of(rec_.marks.begin(), rec_.marks.end(), [&](const Mark& m) { return lacks(m.sample); });
    if (everywhere && !rec_.samples.empty()) st.unreadable.emplace(column, why);
    it = everywhere || st.unreadable.count(column) ? st.null_cells.erase(it) : std::next(it);
  }
}

}  // namespace

SamplerEnd sample_until_exit(const SamplerConfig& cfg, const RunSettings& settings, RunRecord& rec,
                             std::string& error) {
  return Sampler(cfg, settings, rec).run(error);
}

}  // namespace mh
