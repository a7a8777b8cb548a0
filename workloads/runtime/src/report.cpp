// Reporter: the workload side of the mark protocol (see report.h).
#include "mhwl/report.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace mhwl {

namespace {

int env_fd(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  long fd = std::strtol(v, &end, 10);
  if (*end != '\0' || fd < 0) return -1;
  return static_cast<int>(fd);
}

// How long a synchronous message waits for the harness before going on alone.
constexpr int kAckTimeoutMs = 2000;

// Appends v in decimal without allocating.
void append_decimal(char* buf, size_t& len, uint32_t v) {
  char digits[10];
  int n = 0;
  do digits[n++] = char('0' + v % 10);
  while (v /= 10);
  while (n) buf[len++] = digits[--n];
}

}  // namespace

Reporter& Reporter::get() {
  static Reporter r;
  return r;
}

Reporter::Reporter() : mark_fd_(env_fd("MEMHARNESS_MARK_FD")), ack_fd_(env_fd("MEMHARNESS_ACK_FD")) {}

void Reporter::send(const nlohmann::ordered_json& message, bool sync) {
  if (mark_fd_ < 0) return;
  nlohmann::ordered_json m = message;
  const bool wait_ack = sync && ack_fd_ >= 0;
  std::lock_guard lock(mu_);
  if (wait_ack) {
    m["seq"] = ++seq_;
    m["sync"] = true;
  }
  std::string line = m.dump() + "\n";
  write_line(line.data(), line.size(), wait_ack);
}

void Reporter::write_line(const char* line, size_t len, bool wait_ack) {
  if (!write_all(line, len)) {
    mark_fd_ = -1;  // the harness went away: carry on unmeasured
    return;
  }
  if (!wait_ack || wait_for_ack()) return;
  // Said to the harness, which fails the run: a mark it sampled late is not
  // where the workload put it. Built by hand: this may run inside mark_noalloc.
  char msg[128];
  size_t len2 = 0;
  auto put = [&](const char* s) {
    for (size_t i = 0; s[i] && len2 < sizeof msg - 2; ++i) msg[len2++] = s[i];
  };
  put("{\"error\": \"message ");
  append_decimal(msg, len2, seq_);
  put(" was not acknowledged within 2000 ms\"}\n");
  write_all(msg, len2);
}

bool Reporter::write_all(const char* data, size_t len) {
  for (size_t off = 0; off < len;) {
    ssize_t n = ::write(mark_fd_, data + off, len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

bool Reporter::wait_for_ack() {
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const long elapsed_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (elapsed_ms >= kAckTimeoutMs) return false;
    pollfd p{ack_fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(kAckTimeoutMs - elapsed_ms));
    if (r < 0 && errno == EINTR) continue;
    if (r != 1) return false;
    uint32_t echoed = 0;
    ssize_t got = ::read(ack_fd_, &echoed, sizeof echoed);
    if (got < 0 && errno == EINTR) continue;
    if (got != sizeof echoed) {
      ack_fd_ = -1;  // the harness went away
      return true;
    }
    if (echoed == seq_) return true;
    // An ack of an earlier message that came after its wait ran out: drop it.
  }
}

void Reporter::mark_noalloc(const char* name) {
  if (mark_fd_ < 0) return;
  // Built by hand in a stack buffer: {"mark": "NAME", "seq": N, "sync": true}
  char line[256];
  size_t len = 0;
  auto put = [&](const char* s, size_t max) {
    for (size_t i = 0; s[i] && i < max; ++i) line[len++] = s[i];
  };
  put("{\"mark\": \"", 16);
  put(name, 200);  // the fixed parts take at most 60 more bytes
  put("\"", 1);
  std::lock_guard lock(mu_);
  const bool wait_ack = ack_fd_ >= 0;
  if (wait_ack) {
    put(", \"seq\": ", 16);
    append_decimal(line, len, ++seq_);
    put(", \"sync\": true", 16);
  }
  put("}\n", 2);
  if (mark_fd_ >= 0) write_line(line, len, wait_ack);
}

void Reporter::mark(std::string_view name) { send({{"mark", name}}, true); }

void Reporter::metric(std::string_view name, double value) {
  send({{"metric", name}, {"value", value}});
}

void Reporter::metric_null(std::string_view name, std::string_view reason) {
  send({{"metric", name}, {"value", nullptr}, {"reason", reason}});
}

void Reporter::metric_above(std::string_view name, double bound, std::string_view reason) {
  send({{"metric", name}, {"value", nullptr}, {"above", bound}, {"reason", reason}});
}

void Reporter::data(std::string_view key, const nlohmann::ordered_json& value) {
  send({{"data", {{"key", key}, {"value", value}}}});
}

long read_own_hwm_kb() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmHWM:", 6) == 0) {
      kb = std::strtol(line + 6, nullptr, 10);
      break;
    }
  std::fclose(f);
  return kb;
}

}  // namespace mhwl
