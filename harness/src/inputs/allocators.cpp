// Allocator registry (see allocators.h).
#include "inputs/allocators.h"

#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/escape.h"
#include "sys/spawn.h"

#include "sys/elf_symbols.h"

namespace mh {

namespace {

using Options = std::vector<std::pair<std::string, std::string>>;

std::string upper(std::string s) {
  for (auto& c : s) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string lower(std::string s) {
  for (auto& c : s) c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string join_with(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// Each family's own way of reading options from the environment, and of saying
// which options it has.
struct Family {
  const char* name;
  std::vector<const char*> sonames;  // first found wins
  const char* debian_package;
  std::map<std::string, std::string> (*to_env)(const Options&);
  // "" when every option is one the library at `library` reads, else why not.
  // Null for a family that cannot list its options (jemalloc); its complaints
  // at run time fail the run instead.
  std::string (*check)(const Options&, const std::string& library);
  // How the library starts a complaint about its options on stderr.
  std::vector<std::string> complaints;
  // Why any option is refused, for a family that reads none; else nullptr.
  const char* no_options;
};

// A family no system package provides: its library comes from a pin
// (NAME@REV) or a path (NAME=/path/lib.so) only.
bool pin_only(const Family& f) { return f.sonames.empty() && *f.debian_package == '\0'; }

std::map<std::string, std::string> prefixed_env(const Options& opts, const std::string& prefix) {
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : opts) env[prefix + upper(k)] = v;
  return env;
}

std::map<std::string, std::string> joined_env(const Options& opts, const std::string& variable,
                                              const std::string& prefix, const char* kv, const char* separator) {
  std::vector<std::string> items;
  for (const auto& [k, v] : opts) items.push_back(prefix + k + kv + v);
  std::map<std::string, std::string> env;
  if (!items.empty()) env[variable] = join_with(items, separator);
  return env;
}

// "" when every option name is one of `valid`, else the message naming the
// first unknown one and the valid ones. An empty `valid` (the library did not
// say) lets everything through.
std::string check_names(const Options& opts, const std::vector<std::string>& valid, const char* family) {
  if (valid.empty()) return "";
  for (const auto& [k, v] : opts)
    if (std::find(valid.begin(), valid.end(), lower(k)) == valid.end())
      return "unknown option '" + k + "' for " + family + "; valid: " + join_with(valid, ", ");
  return "";
}

// The option names a library prints about itself when its verbose variable is
// set: lines `<prefix>NAME<end>`, with any one of `prefixes`. Asked of the
// library itself, so that a build of another version answers for that version.
std::vector<std::string> probe_option_names(const std::string& library, const std::string& verbose_variable,
                                            const std::vector<std::string>& prefixes, const std::string& end) {
  // A library that starts on its first malloc needs a program that allocates: this one, asked for its help.
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  auto c = run_capture({"/usr/bin/env", "LD_PRELOAD=" + library, verbose_variable + "=1", self, "--help"});
  std::vector<std::string> names;
  std::istringstream lines(c.err);
  for (std::string line; std::getline(lines, line);)
    for (const auto& prefix : prefixes) {
      if (line.rfind(prefix, 0) != 0) continue;
      auto stop = line.find(end, prefix.size());
      if (stop != std::string::npos) names.push_back(line.substr(prefix.size(), stop - prefix.size()));
      break;
    }
  return names;
}

// glibc's malloc tunables with their ranges, from the loader itself.
struct Tunable {
  std::string name;
  unsigned long long min = 0, max = ~0ull;
};
std::vector<Tunable> glibc_tunables() {
  glob_t g{};
  std::string loader;
  for (const char* pattern : {"/lib64/ld-linux*.so*", "/lib/ld-linux*.so*", "/lib/*/ld-linux*.so*"})
    if (loader.empty() && glob(pattern, 0, nullptr, &g) == 0 && g.gl_pathc > 0) loader = g.gl_pathv[0];
  globfree(&g);
  std::vector<Tunable> out;
  if (loader.empty()) return out;
  // glibc.malloc.tcache_count: 0x0 (min: 0x0, max: 0xffffffffffffffff)
  std::istringstream lines(run_capture({loader, "--list-tunables"}).out);
  const std::string prefix = "glibc.malloc.";
  for (std::string line; std::getline(lines, line);) {
    auto colon = line.find(':');
    if (line.rfind(prefix, 0) != 0 || colon == std::string::npos) continue;
    Tunable t{line.substr(prefix.size(), colon - prefix.size())};
    auto min = line.find("(min: "), max = line.find(", max: ");
    if (min != std::string::npos) t.min = std::strtoull(line.c_str() + min + 6, nullptr, 0);
    if (max != std::string::npos) t.max = std::strtoull(line.c_str() + max + 7, nullptr, 0);
    out.push_back(t);
  }
  return out;
}

std::string check_glibc(const Options& opts, const std::string&) {
  auto tunables = glibc_tunables();
  std::vector<std::string> names;
  for (const auto& t : tunables) names.push_back(t.name);
  if (auto e = check_names(opts, names, "glibc"); !e.empty()) return e;
  for (const auto& [k, v] : opts)
    for (const auto& t : tunables) {
      if (t.name != lower(k)) continue;
      // The loader reads decimal or 0x hexadecimal and ignores anything else without a word.
      char* end = nullptr;
      errno = 0;
      unsigned long long x = std::strtoull(v.c_str(), &end, 0);
      if (v.empty() || v[0] == '-' || *end != '\0' || errno == ERANGE || x < t.min || x > t.max)
        return "bad value '" + v + "' for glibc option " + k + ": expected an integer from " +
               std::to_string(t.min) + " to " + std::to_string(t.max);
    }
  return "";
}

const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      // glibc reads malloc tunables from one variable: glibc.malloc.NAME=VALUE:...
      {"glibc", {}, "libc6",
       [](const Options& o) { return joined_env(o, "GLIBC_TUNABLES", "glibc.malloc.", "=", ":"); }, check_glibc,
       {}, nullptr},
      {"jemalloc", {"libjemalloc.so.2"}, "libjemalloc2",
       [](const Options& o) { return joined_env(o, "MALLOC_CONF", "", ":", ","); }, nullptr,
       {"<jemalloc>: Invalid conf", "<jemalloc>: Malformed conf"}, nullptr},
      // mimalloc prints every option it has when MIMALLOC_VERBOSE is set
      // ("mimalloc: option 'NAME': ..." in 2.x, "option 'NAME': ..." in 3.x).
      {"mimalloc", {"libmimalloc.so.2"}, "libmimalloc2.0",
       [](const Options& o) { return prefixed_env(o, "MIMALLOC_"); },
       [](const Options& o, const std::string& lib) {
         return check_names(
             o, probe_option_names(lib, "MIMALLOC_VERBOSE", {"mimalloc: option '", "option '"}, "'"), "mimalloc");
       },
       {}, nullptr},
      // gperftools cannot list its options: these are the TCMALLOC_ variables its
      // documentation names (docs/tcmalloc.html), all read by libtcmalloc_minimal.
      {"tcmalloc", {"libtcmalloc_minimal.so.4", "libtcmalloc.so.4"}, "libtcmalloc-minimal4",
       [](const Options& o) { return prefixed_env(o, "TCMALLOC_"); },
       [](const Options& o, const std::string&) {
         return check_names(o,
                            {"sample_parameter", "release_rate", "large_alloc_report_threshold",
                             "max_total_thread_cache_bytes", "aggressive_decommit", "heap_limit_mb",
                             "disable_memory_release", "skip_sbrk", "skip_mmap", "transfer_num_obj",
                             "memfs_malloc_path", "memfs_limit_mb", "memfs_abort_on_fail",
                             "memfs_ignore_mmap_fail", "memfs_map_private", "memfs_disable_fallback"},
                            "tcmalloc");
       },
       {}, nullptr},
      // scav prints its option table (allocators/scav/src/options.cpp) when SCAV_VERBOSE is set.
      {"scav", {"libscav.so"}, "", [](const Options& o) { return prefixed_env(o, "SCAV_"); },
       [](const Options& o, const std::string& lib) {
         return check_names(o, probe_option_names(lib, "SCAV_VERBOSE", {"scav:   "}, " = "), "scav");
       },
       {"scav: warning: bad value"}, nullptr},
      // snmalloc (libsnmallocshim.so) has no package: it is built from a pin.
      // Its settings are compile-time constants; it reads no environment.
      {"snmalloc", {}, "", [](const Options&) { return std::map<std::string, std::string>(); }, nullptr, {},
       "snmalloc reads no options from the environment: its settings are fixed when it is built, so each "
       "setting is a pin of its own (snmalloc-checks in allocators/pins.json is one)"},
  };
  return f;
}

const Family* find_family(const std::string& name) {
  for (const auto& f : families())
    if (name == f.name) return &f;
  return nullptr;
}

std::string names_list() {
  std::string s;
  for (const auto& f : families()) s += std::string(s.empty() ? "" : ", ") + f.name;
  return s + ", or NAME=/path/to/lib.so";
}

void read_ld_conf(const std::string& path, std::vector<std::string>& dirs, int depth) {
  std::ifstream in(path);
  std::string line;
  while (depth < 4 && std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    if (line.rfind("include", 0) == 0) {
      std::string pattern = line.substr(7);
      pattern.erase(0, pattern.find_first_not_of(" \t"));
      glob_t g{};
      if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) read_ld_conf(g.gl_pathv[i], dirs, depth + 1);
      globfree(&g);
    } else {
      dirs.push_back(line);
    }
  }
}

std::string find_library(const Family& fam, const AllocatorContext& ctx) {
  if (std::string(fam.name) == "scav") return ctx.scav_library;
  for (const char* so : fam.sonames)
    for (const auto& dir : ctx.search_dirs) {
      std::string p = dir + "/" + so;
      if (access(p.c_str(), R_OK) == 0) return p;
    }
  return {};
}

std::string missing_reason(const Family& fam) {
  if (std::string(fam.name) == "scav") return "scav: libscav.so was not built with this harness";
  if (pin_only(fam))
    return std::string(fam.name) + ": no system package provides it; build it from a pin (" + fam.name +
           "@REV, allocators/pins.json) or name a build by its path (" + fam.name + "=/path/lib.so)";
  return std::string(fam.name) + ": " + fam.sonames.front() + " not found in the loader's paths (install the Debian package " +
         fam.debian_package + ": apt-get install " + fam.debian_package + ")";
}

bool parse_options(const std::string& text, Options& out, std::string& error) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    auto eq = item.find('=');
    if (item.empty() || eq == 0 || eq == std::string::npos) {
      error = "bad allocator option '" + item + "': options are KEY=VALUE separated by commas";
      return false;
    }
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    pos = comma + 1;
  }
  return true;
}

}  // namespace

bool is_shared_library(const std::string& path, std::string& why_not) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why_not = std::string("cannot open it: ") + std::strerror(errno);
    return false;
  }
  auto read_at = [&](void* buf, size_t len, off_t off) { return pread(fd, buf, len, off) == ssize_t(len); };
  Elf64_Ehdr h{};
  bool ok = read_at(&h, sizeof h, 0) && std::memcmp(h.e_ident, ELFMAG, SELFMAG) == 0;
  if (!ok) {
    ::close(fd);
    why_not = "it is not an ELF file";
    return false;
  }
  if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_type != ET_DYN) {
    ::close(fd);
    why_not = "it is not a 64-bit shared library (ELF type " + std::to_string(h.e_type) + ")";
    return false;
  }
  // A position-independent executable is ET_DYN too; the linker marks it with
  // DF_1_PIE in the dynamic section.
  bool pie = false;
  for (int i = 0; i < h.e_phnum && !pie; ++i) {
    Elf64_Phdr ph{};
    if (!read_at(&ph, sizeof ph, off_t(h.e_phoff + uint64_t(i) * h.e_phentsize)) || ph.p_type != PT_DYNAMIC) continue;
    for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= ph.p_filesz; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d{};
      if (!read_at(&d, sizeof d, off_t(ph.p_offset + off)) || d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_FLAGS_1 && (d.d_un.d_val & DF_1_PIE)) pie = true;
    }
  }
  ::close(fd);
  if (pie) {
    why_not = "it is a position-independent executable, not a 64-bit shared library";
    return false;
  }
  return true;
}

AllocatorContext default_allocator_context(const std::string& build_libdir) {
  AllocatorContext ctx;
  if (const char* llp = std::getenv("LD_LIBRARY_PATH")) {
    std::string s = llp;
    for (size_t pos = 0; pos <= s.size();) {
      size_t c = s.find(':', pos);
      if (c == std::string::npos) c = s.size();
      if (c > pos) ctx.search_dirs.push_back(s.substr(pos, c - pos));
      pos = c + 1;
    }
  }
  read_ld_conf("/etc/ld.so.conf", ctx.search_dirs, 0);
  for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"})
    ctx.search_dirs.push_back(d);
  std::string scav = build_libdir + "/libscav.so";
  if (access(scav.c_str(), R_OK) == 0) ctx.scav_library = scav;
  return ctx;
}

std::string refused_options(const std::string& family) {
  const Family* f = find_family(family);
  return f && f->no_options ? f->no_options : "";
}

std::vector<std::string> builtin_allocator_names() {
  std::vector<std::string> out;
  for (const auto& f : families()) out.push_back(f.name);
  return out;
}

std::optional<AllocatorSpec> parse_allocator(const std::string& text, const AllocatorContext& ctx,
                                             std::string& error) {
  AllocatorSpec spec;
  spec.label = escape::identity(text);  // a run's identity: valid UTF-8, reversibly
  std::string head = text, opts;
  // NAME=/path[:opts] - the path ends at the first ':' after it.
  auto eq = text.find('=');
  auto colon = text.find(':');
  const bool has_path = eq != std::string::npos && (colon == std::string::npos || eq < colon);
  if (has_path) {
    std::string name = text.substr(0, eq);
    std::string rest = text.substr(eq + 1);
    auto c = rest.find(':');
    std::string path = rest.substr(0, c);
    if (c != std::string::npos) opts = rest.substr(c + 1);
    if (name.empty() || path.empty()) {
      error = "bad allocator '" + text + "': expected NAME=/path/to/lib.so";
      return std::nullopt;
    }
    std::string why;
    if (!is_shared_library(path, why)) {
      error = "bad allocator '" + text + "': " + path + " is not a shared library (" + why + ")";
      return std::nullopt;
    }
    if (!defines_dynamic_symbol(path, "malloc", why)) {
      error = "bad allocator '" + text + "': " + path + " is not an allocator (" + why + ")";
      return std::nullopt;
    }
    spec.library = std::filesystem::absolute(path).lexically_normal().string();
    // A name that is a built-in family keeps that family's options and check.
    const Family* fam = find_family(name);
    spec.family = fam && std::string(fam->name) != "glibc" ? fam->name : "custom";
  } else {
    std::string name = text.substr(0, colon);
    if (colon != std::string::npos) opts = text.substr(colon + 1);
    const Family* fam = find_family(name);
    if (!fam) {
      error = "unknown allocator '" + name + "'; valid: " + names_list();
      return std::nullopt;
    }
    spec.family = fam->name;
    if (spec.family != "glibc") {
      spec.library = find_library(*fam, ctx);
      if (spec.library.empty()) {
        error = "allocator '" + name + "' is not available: " + missing_reason(*fam);
        return std::nullopt;
      }
    }
  }
  if (!opts.empty() && !parse_options(opts, spec.options, error)) {
    error = "in allocator '" + text + "': " + error;
    return std::nullopt;
  }
  if (const Family* fam = find_family(spec.family)) {
    if (fam->no_options && !spec.options.empty()) {
      error = "in allocator '" + text + "': " + fam->no_options;
      return std::nullopt;
    }
    if (fam->check && !spec.options.empty())
      if (error = fam->check(spec.options, spec.library); !error.empty()) {
        error = "in allocator '" + text + "': " + error;
        return std::nullopt;
      }
    spec.env = fam->to_env(spec.options);
    spec.complaints = fam->complaints;
  } else {
    for (const auto& [k, v] : spec.options) spec.env[k] = v;  // custom: options are the environment
  }
  return spec;
}

std::string option_complaint(const AllocatorSpec& spec, const std::string& output) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    for (const auto& c : spec.complaints)
      if (line.find(c) != std::string::npos) return line;
  return "";
}

std::vector<AllocatorSpec> available_builtins(const AllocatorContext& ctx, std::vector<std::string>* missing) {
  std::vector<AllocatorSpec> out;
  for (const auto& f : families()) {
    std::string error;
    if (pin_only(f)) continue;  // never there without a pin: not worth a word on every run
    if (auto s = parse_allocator(f.name, ctx, error)) out.push_back(*s);
    else if (missing) missing->push_back(missing_reason(f));
  }
  return out;
}

}  // namespace mh
