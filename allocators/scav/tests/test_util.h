// test_util.h - helpers shared by the scav tests: reading counters from
// scav_stats_json, polling with a deadline, printing a pointer. Test-only; any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "scav.h"

namespace scav_test {

// Reads one counter without allocating (the buffer is on the stack), so a test can
// watch the allocator without disturbing it.
inline int64_t stat(const char* key) {
  char buf[2048];
  size_t n = scav_stats_json(buf, sizeof buf);
  if (n >= sizeof buf) std::abort();
  char pat[64];
  size_t k = strlen(key);
  if (k + 4 > sizeof pat) std::abort();
  pat[0] = '"';
  memcpy(pat + 1, key, k);
  pat[k + 1] = '"';
  pat[k + 2] = ':';
  pat[k + 3] = 0;
  const char* p = strstr(buf, pat);
  if (!p) return INT64_MIN;
  return strtoll(p + k + 3, nullptr, 10);
}

template <class Pred>
bool wait_for(Pred pred, int timeout_ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return pred();
}

constexpr int64_t kMiB = 1 << 20;

// A pointer as the allocator's abort messages print it (and as a death test expects).
inline std::string hex(const void* p) {
  char b[32];
  snprintf(b, sizeof b, "%p", p);
  return b;
}

}  // namespace scav_test
