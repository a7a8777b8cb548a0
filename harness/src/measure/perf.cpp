// PerfCounters (see perf.h).
#include "measure/perf.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "sys/procfs.h"

namespace mh {

namespace {

struct EventDef {
  const char* name;
  uint32_t type;
  uint64_t config;
};

constexpr EventDef kEvents[] = {
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
};

int open_event(const EventDef& ev, int pid, bool exclude_kernel) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = ev.type;
  attr.config = ev.config;
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.inherit = 1;
  attr.exclude_kernel = exclude_kernel;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

std::string why_not(int err) {
  switch (err) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
      return std::string("not supported on this machine (perf_event_open: ") + std::strerror(err) + ")";
    case EACCES:
    case EPERM: {
      auto p = procfs::read_text("/proc/sys/kernel/perf_event_paranoid");
      return std::string("not permitted (perf_event_open: ") + std::strerror(err) +
             "; kernel.perf_event_paranoid=" + (p ? p->substr(0, p->find('\n')) : "?") + ")";
    }
    default:
      return std::string("perf_event_open failed: ") + std::strerror(err);
  }
}

}  // namespace

PerfCounters::PerfCounters(int pid) {
  for (const auto& ev : kEvents) {
    Counter c;
    c.name = ev.name;
    c.fd = open_event(ev, pid, false);
    // Unprivileged users may count user space only.
    if (c.fd < 0 && (errno == EACCES || errno == EPERM)) c.fd = open_event(ev, pid, true);
    if (c.fd < 0) c.reason = why_not(errno);
    counters_.push_back(std::move(c));
  }
}

PerfCounters::~PerfCounters() {
  for (auto& c : counters_)
    if (c.fd >= 0) ::close(c.fd);
}

std::map<std::string, Maybe> PerfCounters::read() const {
  std::map<std::string, Maybe> out;
  for (const auto& c : counters_) {
    Maybe m;
    if (c.fd < 0) {
      m.reason = c.reason;
    } else {
      uint64_t v[3] = {0, 0, 0};  // value, time enabled, time running
      if (::read(c.fd, v, sizeof v) != sizeof v) {
        m.reason = std::string("read failed: ") + std::strerror(errno);
      } else if (v[2] == 0) {
        m.reason = v[1] == 0 ? "never enabled (the workload did not exec)" : "never scheduled on a counter";
      } else {
        // Scale when the kernel multiplexed the counter.
        m.value = v[2] < v[1] ? double(v[0]) * double(v[1]) / double(v[2]) : double(v[0]);
      }
    }
    out[c.name] = std::move(m);
  }
  return out;
}

}  // namespace mh
