// debug.h - assertions of the allocator's invariants; active when SCAV_DEBUG is defined
// (CMAKE_BUILD_TYPE=Debug). No state. Failure writes with write(2) and aborts, so it can
// fire inside malloc without recursing into it.
#pragma once

namespace scav {
[[noreturn]] void assert_fail(const char* expr, const char* file, int line);
}

#define SCAV_LIKELY(x) __builtin_expect(!!(x), 1)
#define SCAV_UNLIKELY(x) __builtin_expect(!!(x), 0)

#ifdef SCAV_DEBUG
#define SCAV_ASSERT(x) \
  do { if (SCAV_UNLIKELY(!(x))) ::scav::assert_fail(#x, __FILE__, __LINE__); } while (0)
#else
#define SCAV_ASSERT(x) do { } while (0)
#endif
