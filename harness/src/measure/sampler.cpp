// The sampling loop and the harness side of the mark protocol (see sampler.h).
#include "measure/sampler.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "measure/proc_tree.h"
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

Json apply_message(const std::string& line, RunRecord& rec) {
  Json m = Json::parse(line, nullptr, false);
  if (m.is_discarded() || !m.is_object()) return Json(Json::value_t::discarded);
  if (m.contains("metric") && m["metric"].is_string()) {
    Maybe v;
    if (m.contains("value") && m["value"].is_number()) v.value = m["value"].get<double>();
    else v.reason = m.value("reason", std::string("the workload reported no value"));
    rec.workload_metrics[m["metric"].get<std::string>()] = v;
  } else if (m.contains("allocator") && m["allocator"].is_object()) {
    const auto& a = m["allocator"];
    rec.allocator.version = a.value("version", "");
    rec.allocator.served_by = a.value("library", "");
    rec.allocator.identified = a.value("name", "");
  } else if (m.contains("allocator_stats")) {
    rec.allocator_stats = m["allocator_stats"];
  } else if (m.contains("data") && m["data"].is_object() && m["data"].contains("key") && m["data"]["key"].is_string()) {
    rec.data[m["data"]["key"].get<std::string>()] = m["data"].value("value", Json());
  } else if (m.contains("error") && m["error"].is_string()) {
    rec.protocol_errors.push_back(m["error"].get<std::string>());
  } else if (m.contains("hwm_kb") && m["hwm_kb"].is_number()) {
    double kb = m["hwm_kb"].get<double>();
    if (kb >= 0) rec.hwm_kb.value = kb;
    else rec.hwm_kb.reason = "the workload could not read its VmHWM";
  }
  return m;
}

SamplerEnd sample_until_exit(const SamplerConfig& cfg, const RunSettings& settings, RunRecord& rec,
                             std::string& error) {
  procfs::ProcReader proc(cfg.pid, cfg.proc_root, cfg.tree);
  std::optional<procfs::ProcTree> tree;
  if (cfg.tree) tree.emplace(cfg.pid, cfg.proc_root);
  int64_t processes_max = 1;
  rec.sampler.unreadable = proc.unreadable();
  uint32_t last_seq = 0;
  std::map<int, ThreadStat> threads;
  std::vector<double> costs_us, gaps_ms, smaps_costs_us;
  // smaps_rollup walks every page table with the workload's mmap lock held
  // (5 ms at 470 MB), stalling its mmap and munmap for that long: periodic
  // reads only when asked for.
  const bool periodic_smaps = settings.smaps_ms > 0;
  const auto smaps_interval = std::chrono::microseconds(static_cast<int64_t>(settings.smaps_ms * 1000));
  auto next_smaps = Clock::now();
  auto next_stat = Clock::now();
  auto next_tree = Clock::now();
  const auto interval = std::chrono::microseconds(static_cast<int64_t>(settings.sample_ms * 1000));
  const auto deadline = cfg.t0 + std::chrono::microseconds(static_cast<int64_t>(settings.timeout_s * 1e6));
  auto next = Clock::now();
  auto next_threads = next;
  auto next_progress = next;
  double last_periodic_ms = -1;
  Sample last{};
  bool have_last = false;
  std::string pending;
  bool mark_open = cfg.mark_fd >= 0;
  bool exited = false;

  auto take = [&](Sample& s, bool at_mark) {
    auto a = Clock::now();
    const bool with_smaps = at_mark || (periodic_smaps && a >= next_smaps);
    // status only at marks: statm already gives RSS and its anonymous part.
    const bool with_stat = at_mark || a >= next_stat;
    if (with_stat) next_stat = a + kStatGap;
    bool ok = proc.sample(s, with_smaps, at_mark, with_stat);
    if (ok && tree) {
      if (at_mark || a >= next_tree) {
        tree->discover();
        next_tree = a + kTreeGap;
      }
      processes_max = std::max<int64_t>(processes_max, 1 + tree->add_descendants(s, with_smaps, at_mark, with_stat));
    }
    auto b = Clock::now();
    s.t_ms = ms_since(cfg.t0, a);
    const double cost_us = std::chrono::duration<double, std::micro>(b - a).count();
    costs_us.push_back(cost_us);
    if (with_smaps) {
      smaps_costs_us.push_back(cost_us);
      next_smaps = a + smaps_interval;
    }
    if (ok) {
      last = s;
      have_last = true;
      rec.samples.push_back(s);
    }
    return ok;
  };

  auto add_mark = [&](const std::string& name, Clock::time_point received, bool process_alive) {
    Mark mk;
    mk.name = name;
    Sample s;
    if (process_alive && take(s, true)) {
      mk.sample = s;
      // The peak of the phase that ends here, then a fresh peak for the next.
      mk.hwm_kb = proc.last_hwm_kb();
      mk.hwm_reset = cfg.reset_hwm && proc.reset_hwm();
      merge_threads(threads, proc.threads());
      if (tree) merge_threads(threads, tree->threads());
    } else if (have_last) {
      mk.sample = last;
    }
    mk.t_ms = ms_since(cfg.t0, received);
    if (cfg.on_progress) cfg.on_progress(mk.t_ms, mk.name);
    rec.marks.push_back(std::move(mk));
  };

  auto drive = [&](bool alive) {
    const auto now = Clock::now();
    for (const auto& name : cfg.driver->step(now, alive)) add_mark(name, now, alive);
  };

  auto handle_lines = [&](bool process_alive) {
    size_t eol;
    while ((eol = pending.find('\n')) != std::string::npos) {
      std::string line = pending.substr(0, eol);
      pending.erase(0, eol + 1);
      auto received = Clock::now();
      Json m = apply_message(line, rec);
      if (m.is_discarded()) continue;
      // Synchronous messages count 1, 2, 3...: a gap or a repeat means the
      // workload went on past a message (a mark) the harness had not answered.
      const uint32_t seq = m.contains("seq") && m["seq"].is_number_unsigned() ? m["seq"].get<uint32_t>() : 0;
      if (seq != 0) {
        if (seq != last_seq + 1)
          rec.protocol_errors.push_back("message " + (m.contains("mark") ? m["mark"].dump() : std::string()) +
                                        " has sequence number " +
                                        std::to_string(seq) + ", expected " + std::to_string(last_seq + 1));
        last_seq = seq;
      }
      if (m.contains("mark") && m["mark"].is_string()) add_mark(m["mark"].get<std::string>(), received, process_alive);
      if (m.value("sync", false) && cfg.ack_fd >= 0) write_ack(cfg.ack_fd, seq);
    }
  };

  auto read_marks = [&]() {
    char buf[4096];
    for (;;) {
      ssize_t n = read(cfg.mark_fd, buf, sizeof buf);
      if (n > 0) {
        pending.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) mark_open = false;
      else if (errno == EINTR) continue;
      break;  // EAGAIN: nothing more for now
    }
  };

  SamplerEnd end = SamplerEnd::Exited;
  while (!exited) {
    auto now = Clock::now();
    if (now >= next) {
      Sample s;
      if (take(s, false)) {
        if (last_periodic_ms >= 0) gaps_ms.push_back(s.t_ms - last_periodic_ms);
        last_periodic_ms = s.t_ms;
      }
      if (cfg.driver && costs_us.size() == 1) cfg.driver->first_sample_taken();
      next += interval;
      if (next <= now) next = now + interval;  // we fell behind: do not burst to catch up
      if (now >= next_threads) {
        merge_threads(threads, proc.threads());
        if (tree) merge_threads(threads, tree->threads());
        next_threads = now + std::chrono::milliseconds(500);
      }
    }
    // On its own clock: a long --sample-ms must not freeze the progress line.
    if (cfg.on_progress && now >= next_progress) {
      cfg.on_progress(ms_since(cfg.t0, now), rec.marks.empty() ? std::string() : rec.marks.back().name);
      next_progress = now + std::chrono::milliseconds(500);
    }
    if (now >= deadline) {
      end = SamplerEnd::TimedOut;
      break;
    }
    auto wake = std::min(next, deadline);
    if (cfg.on_progress) wake = std::min(wake, next_progress);
    if (cfg.driver) wake = std::min(wake, cfg.driver->next_wake());
    auto wait = std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(wake - Clock::now()).count());
    timespec ts{static_cast<time_t>(wait / 1000000000), static_cast<long>(wait % 1000000000)};
    std::vector<pollfd> fds = {{cfg.pidfd, POLLIN, 0}, {mark_open ? cfg.mark_fd : -1, POLLIN, 0}, {cfg.stop_fd, POLLIN, 0}};
    if (cfg.driver)
      for (int fd : cfg.driver->watch_fds()) fds.push_back({fd, POLLIN, 0});
    int r = ppoll(fds.data(), fds.size(), &ts, nullptr);
    if (r < 0 && errno != EINTR) {
      error = std::string("ppoll: ") + std::strerror(errno);
      end = SamplerEnd::Error;
      break;
    }
    if (r > 0 && (fds[2].revents & POLLIN)) {
      end = SamplerEnd::Interrupted;
      break;
    }
    if (r > 0 && (fds[1].revents & (POLLIN | POLLHUP))) {
      read_marks();
      handle_lines(true);
    }
    if (r > 0 && (fds[0].revents & POLLIN)) exited = true;
    if (cfg.driver && !exited) {
      drive(true);
      std::string why;
      if (auto e = cfg.driver->end(why)) {
        end = *e;
        if (end == SamplerEnd::Error) error = why;
        break;
      }
    }
  }
  // What the workload wrote just before it exited.
  if (mark_open) read_marks();
  handle_lines(false);
  if (cfg.driver && end == SamplerEnd::Exited) drive(false);

  for (auto& [tid, t] : threads) rec.threads.push_back(t);
  rec.sampler.interval_ms = settings.sample_ms;
  rec.sampler.smaps_ms = settings.smaps_ms;
  rec.sampler.count = static_cast<int64_t>(costs_us.size());
  if (!costs_us.empty()) {
    rec.sampler.cost_us_median = stats::median(costs_us);
    rec.sampler.cost_us_max = *std::max_element(costs_us.begin(), costs_us.end());
  }
  if (!gaps_ms.empty()) rec.sampler.achieved_ms = stats::median(gaps_ms);
  rec.sampler.smaps_reads = static_cast<int64_t>(smaps_costs_us.size());
  if (!smaps_costs_us.empty()) rec.sampler.smaps_cost_us_median = stats::median(smaps_costs_us);
  rec.sampler.hwm_reset_error = proc.reset_error();
  if (tree) {
    rec.sampler.tree = true;
    rec.sampler.tree_found_by = tree->how();
    rec.sampler.processes_max = processes_max;
  }
  return end;
}

}  // namespace mh
