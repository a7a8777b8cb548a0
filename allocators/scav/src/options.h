// options.h - the allocator's options: one table, read once from the environment at
// process init (before any arena exists), read-only afterwards, any thread may read.
#pragma once

#include <cstdint>

namespace scav {

enum class Opt : unsigned {
  kPurgeDelayMs,
  kPurgeHoldMaxMs,
  kScavenger,
  kPurgeAdvice,
  kArenaReserve,
  kHugeCache,
  kSafetyTimeoutMs,
  kVerbose,
  kSecure,
  kThp,
  kThpCollapseMs,
  kCount
};

enum PurgeAdvice : int64_t { kAdviceDontneed = 0, kAdviceFree = 1 };

extern int64_t g_options[unsigned(Opt::kCount)];

inline int64_t option(Opt o) { return g_options[unsigned(o)]; }

// Parse SCAV_* variables of environ, warn about bad values (unreadable, or outside the
// option's range: the default stays) and unknown names on stderr (once per process
// tree), and print the resolved table if verbose. Nothing is read in a secure exec
// (AT_SECURE). Allocates nothing.
void options_init();
void options_print();
// After init, where allocating is allowed: if init printed a warning, put the marker
// in the environment that keeps this process's children from printing it again.
void options_mark_warned();

}  // namespace scav
