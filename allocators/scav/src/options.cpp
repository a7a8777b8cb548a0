// options.cpp - the option table and its parser. Written once by options_init() on the
// first thread that initialises the process, before other threads can reach an
// allocator path; read-only afterwards.
#include "options.h"

#include <sys/auxv.h>

#include <cstddef>
#include <cstdlib>
#include <utility>

#include "os.h"

extern "C" char** environ;

namespace scav {
namespace {

enum class Kind { kInt, kBool, kSize, kAdvice };

struct OptionDesc {
  const char* name;  // the variable is SCAV_ + name in upper case
  int64_t def;
  // The values accepted, both included: outside them the default is kept, with a
  // warning (an arena reserve of 1000000G would cost seconds of the first malloc).
  int64_t min;
  int64_t max;
  Kind kind;
  const char* unit;
  const char* meaning;
};

constexpr int64_t kHourMs = 3600 * 1000;
constexpr int64_t kMiB = int64_t(1) << 20, kGiB = int64_t(1) << 30;

// clang-format off
constexpr OptionDesc kTable[] = {
  // name               default          min              max          kind          unit     meaning
  {"purge_delay_ms",    100,             0,               kHourMs,     Kind::kInt,    "ms",    "a freed arena range is purged this long after the free"},
  {"purge_hold_max_ms", 1000,            0,               kHourMs,     Kind::kInt,    "ms",    "hold past the delay: for memory soon reused, and large blocks from the start; 0: fixed"},
  {"scavenger",         1,               0,               1,           Kind::kBool,   "bool",  "run the background scavenger thread; 0 purges inline on slow paths"},
  {"purge_advice",      kAdviceDontneed, kAdviceDontneed, kAdviceFree, Kind::kAdvice, "enum",  "dontneed (RSS drops now) or free (MADV_FREE, lazy)"},
  {"arena_reserve",     1 * kGiB,        64 * kMiB,       64 * kGiB,   Kind::kSize,   "bytes", "address space reserved per arena (multiple of 64M)"},
  {"huge_cache",        64 * kMiB,       0,               64 * kGiB,   Kind::kSize,   "bytes", "recently freed direct mappings kept for reuse"},
  {"safety_timeout_ms", 30000,           100,             kHourMs,     Kind::kInt,    "ms",    "scavenger scans everything after this long asleep"},
  {"verbose",           0,               0,               1,           Kind::kBool,   "bool",  "print this table to stderr at init"},
  {"secure",            0,               0,               1,           Kind::kBool,   "bool",  "check every free and realloc: double, invalid and interior pointers abort"},
  {"thp",               0,               0,               1,           Kind::kBool,   "bool",  "arenas ask for transparent huge pages (MADV_HUGEPAGE); 0 opts them out"},
  {"thp_collapse_ms",   100,             0,               kHourMs,     Kind::kInt,    "ms",    "2 MiB of arena in use and resident this long after it filled becomes one huge page; 0: never"},
};
// clang-format on
static_assert(sizeof kTable / sizeof kTable[0] == unsigned(Opt::kCount));

constexpr bool defaults_in_range() {
  for (const OptionDesc& d : kTable)
    if (d.min > d.def || d.def > d.max) return false;
  return true;
}
static_assert(defaults_in_range());

size_t slen(const char* s) {
  size_t n = 0;
  while (s[n]) n++;
  return n;
}

void put(const char* s) { os::write_stderr(s, slen(s)); }

void put_int(int64_t v) {
  char b[24];
  int n = 0;
  bool neg = v < 0;
  uint64_t u = neg ? uint64_t(-v) : uint64_t(v);
  do { b[n++] = char('0' + u % 10); u /= 10; } while (u);
  if (neg) b[n++] = '-';
  char o[24];
  for (int i = 0; i < n; i++) o[i] = b[n - 1 - i];
  os::write_stderr(o, size_t(n));
}

// A value as the option's kind is written: a size in the largest unit (of those parse
// reads) that divides it.
void put_value(const OptionDesc& d, int64_t v) {
  if (d.kind == Kind::kAdvice) {
    put(v == kAdviceFree ? "free" : "dontneed");
    return;
  }
  if (d.kind == Kind::kSize && v != 0) {
    for (const auto& [shift, suffix] : {std::pair{30, "G"}, {20, "M"}, {10, "K"}}) {
      if (v % (int64_t(1) << shift) == 0) {
        put_int(v >> shift);
        put(suffix);
        return;
      }
    }
  }
  put_int(v);
}

char upper(char c) { return c >= 'a' && c <= 'z' ? char(c - 32) : c; }

void put_upper(const char* s) {
  char b[64];
  size_t n = 0;
  for (; s[n] && n < sizeof b; n++) b[n] = upper(s[n]);
  os::write_stderr(b, n);
}

bool eq(const char* a, const char* b) {
  while (*a && *a == *b) a++, b++;
  return *a == *b;
}

bool is_scav(const char* entry) {
  return entry[0] == 'S' && entry[1] == 'C' && entry[2] == 'A' && entry[3] == 'V' && entry[4] == '_';
}

// If entry is SCAV_<NAME>=value (name in lower case, the variable in upper case),
// returns the value, else null.
const char* value_of(const char* entry, const char* name) {
  if (!is_scav(entry)) return nullptr;
  const char* s = entry + 5;
  while (*name && *s && *s != '=' && upper(*name) == *s) name++, s++;
  return !*name && *s == '=' ? s + 1 : nullptr;
}

// Returns the value of SCAV_<NAME> or null; environ is scanned directly because
// getenv's contract says nothing about allocation.
const char* find_env(const char* name) {
  if (!environ) return nullptr;
  for (char** e = environ; *e; e++)
    if (const char* v = value_of(*e, name)) return v;
  return nullptr;
}

// Set in the environment by the first process of a tree that printed a warning about
// the options, so that its children (a pipeline, a build) do not print it again. Not
// an option.
constexpr const char* kWarnedMarker = "options_warned";
bool g_warned_now = false;

// A SCAV_ variable that names no option: one warning, with the names there are.
void check_name(const char* entry) {
  if (value_of(entry, kWarnedMarker)) return;
  for (const OptionDesc& d : kTable)
    if (value_of(entry, d.name)) return;
  size_t n = 0;
  while (entry[n] && entry[n] != '=') n++;
  put("scav: warning: unknown option ");
  os::write_stderr(entry, n);
  put(" ignored; the options are");
  for (const OptionDesc& d : kTable) {
    put(" SCAV_");
    put_upper(d.name);
  }
  put("\n");
  g_warned_now = true;
}

bool parse(const OptionDesc& d, const char* v, int64_t* out) {
  if (d.kind == Kind::kAdvice) {
    if (eq(v, "dontneed")) { *out = kAdviceDontneed; return true; }
    if (eq(v, "free")) { *out = kAdviceFree; return true; }
    return false;
  }
  if (d.kind == Kind::kBool) {
    if (eq(v, "1") || eq(v, "true") || eq(v, "on") || eq(v, "yes")) { *out = 1; return true; }
    if (eq(v, "0") || eq(v, "false") || eq(v, "off") || eq(v, "no")) { *out = 0; return true; }
    return false;
  }
  if (*v < '0' || *v > '9') return false;
  uint64_t x = 0;
  while (*v >= '0' && *v <= '9') {
    if (x > (uint64_t(1) << 50)) return false;
    x = x * 10 + uint64_t(*v++ - '0');
  }
  if (d.kind == Kind::kSize) {
    unsigned shift = 0;
    if (*v == 'k' || *v == 'K') shift = 10;
    else if (*v == 'm' || *v == 'M') shift = 20;
    else if (*v == 'g' || *v == 'G') shift = 30;
    if (shift) {
      v++;
      if (*v == 'i' && v[1] == 'B') v += 2;  // also accept KiB, MiB, GiB
      else if (*v == 'B' || *v == 'b') v++;
    }
    if (x > (uint64_t(1) << (62 - shift))) return false;
    x <<= shift;
  }
  if (*v) return false;
  *out = int64_t(x);
  return true;
}

}  // namespace

int64_t g_options[unsigned(Opt::kCount)];

void options_init() {
  for (unsigned i = 0; i < unsigned(Opt::kCount); i++) g_options[i] = kTable[i].def;
  // A set-user-ID, set-group-ID or capability-gaining exec (AT_SECURE): the environment
  // is the caller's and is not trusted, as glibc ignores MALLOC_* there. Matters under
  // /etc/ld.so.preload, which applies to such programs too.
  const bool secure_exec = getauxval(AT_SECURE) != 0;
  const bool quiet = find_env(kWarnedMarker) != nullptr;
  for (unsigned i = 0; i < unsigned(Opt::kCount) && !secure_exec; i++) {
    const OptionDesc& d = kTable[i];
    const char* v = find_env(d.name);
    if (!v) continue;
    int64_t x;
    const bool read = parse(d, v, &x);
    if (read && d.min <= x && x <= d.max) {
      g_options[i] = x;
    } else if (!quiet) {
      put("scav: warning: bad value '");
      put(v);
      put("' for option ");
      put(d.name);
      if (read) {
        put(" (outside ");
        put_value(d, d.min);
        put("..");
        put_value(d, d.max);
        put(")");
      }
      put(", keeping the default ");
      put_value(d, d.def);
      put("\n");
      g_warned_now = true;
    }
  }
  if (environ && !secure_exec && !quiet)
    for (char** e = environ; *e; e++)
      if (is_scav(*e)) check_name(*e);
  // Arenas are aligned to and sized in 64 MiB units (see arena.h); the range starts
  // at one.
  int64_t& r = g_options[unsigned(Opt::kArenaReserve)];
  const int64_t unit = 64 * kMiB;
  r = (r + unit - 1) / unit * unit;
  if (option(Opt::kVerbose)) options_print();
}

void options_mark_warned() {
  if (!g_warned_now) return;
  g_warned_now = false;
  setenv("SCAV_OPTIONS_WARNED", "1", 1);
}

void options_print() {
  put("scav: version 0.1.0, options:\n");
  for (unsigned i = 0; i < unsigned(Opt::kCount); i++) {
    const OptionDesc& d = kTable[i];
    put("scav:   ");
    put(d.name);
    put(" = ");
    put_value(d, g_options[i]);
    put(" (");
    put(d.unit);
    put(", default ");
    put_value(d, d.def);
    put(", ");
    put_value(d, d.min);
    put("..");
    put_value(d, d.max);
    put("): ");
    put(d.meaning);
    put("\n");
  }
}

}  // namespace scav
