// Reporter: the workload side of the mark protocol (see report.h).
#include "mhwl/report.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
  if (wait_ack) m["sync"] = true;
  std::string line = m.dump() + "\n";
  std::lock_guard lock(mu_);
  write_line(line.data(), line.size(), wait_ack);
}

void Reporter::write_line(const char* line, size_t len, bool wait_ack) {
  for (size_t off = 0; off < len;) {
    ssize_t n = ::write(mark_fd_, line + off, len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      mark_fd_ = -1;  // the harness went away: carry on unmeasured
      return;
    }
    off += static_cast<size_t>(n);
  }
  if (!wait_ack) return;
  pollfd p{ack_fd_, POLLIN, 0};
  int r;
  do r = ::poll(&p, 1, kAckTimeoutMs);
  while (r < 0 && errno == EINTR);
  if (r == 1) {
    char byte;
    if (::read(ack_fd_, &byte, 1) != 1) ack_fd_ = -1;
  }
}

void Reporter::mark_noalloc(const char* name) {
  if (mark_fd_ < 0) return;
  // Built by hand in a stack buffer: {"mark": "NAME", "sync": true}
  char line[256];
  size_t len = 0;
  auto put = [&](const char* s, size_t max) {
    for (size_t i = 0; s[i] && i < max; ++i) line[len++] = s[i];
  };
  put("{\"mark\": \"", 16);
  put(name, 200);  // the fixed parts take at most 40 more bytes
  put("\"", 1);
  const bool wait_ack = ack_fd_ >= 0;
  if (wait_ack) put(", \"sync\": true", 16);
  put("}\n", 2);
  std::lock_guard lock(mu_);
  if (mark_fd_ >= 0) write_line(line, len, wait_ack);
}

void Reporter::mark(std::string_view name) { send({{"mark", name}}, true); }

void Reporter::metric(std::string_view name, double value) {
  send({{"metric", name}, {"value", value}});
}

void Reporter::metric_null(std::string_view name, std::string_view reason) {
  send({{"metric", name}, {"value", nullptr}, {"reason", reason}});
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
