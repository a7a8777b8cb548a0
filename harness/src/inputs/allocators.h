// The allocator registry: built-in families (glibc, jemalloc, mimalloc,
// tcmalloc, scav, and snmalloc, which only a pin or a path provides), how each takes its options from the environment, where its
// library is, plus NAME=/path/lib.so for any build. The harness never loads
// these libraries itself: it only names them in the child's LD_PRELOAD.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mh {

struct AllocatorSpec {
  std::string label;    // the text the user gave, unique within a run
  std::string family;   // glibc, jemalloc, mimalloc, tcmalloc, scav, snmalloc or custom
  std::string library;  // absolute path to preload, "" for glibc
  std::vector<std::pair<std::string, std::string>> options;
  std::map<std::string, std::string> env;  // the options as this family reads them
  std::vector<std::string> complaints;     // how the library starts a complaint about its options
};

struct AllocatorContext {
  std::vector<std::string> search_dirs;  // where built-in libraries are looked for
  std::string scav_library;              // this build's libscav.so ("" if not built)
};

// The loader's directories (ld.so.conf and the defaults) and this build's scav.
AllocatorContext default_allocator_context(const std::string& build_libdir);

std::vector<std::string> builtin_allocator_names();

// Why `family` takes no options (snmalloc reads no environment), or "" when
// it takes them.
std::string refused_options(const std::string& family);

// Parses NAME[:k=v,...] or NAME=/path/lib.so[:k=v,...]. On error returns nullopt
// with a message that names the bad value and the valid choices; that includes
// an option the family's library does not have, where the family can list them.
std::optional<AllocatorSpec> parse_allocator(const std::string& text, const AllocatorContext& ctx,
                                             std::string& error);

// The first line of a run's output in which the allocator complains about its
// options (jemalloc's "<jemalloc>: Invalid conf pair: ..."), or "".
std::string option_complaint(const AllocatorSpec& spec, const std::string& output);

// Every built-in whose library is present, and why each other one is missing.
std::vector<AllocatorSpec> available_builtins(const AllocatorContext& ctx,
                                              std::vector<std::string>* missing = nullptr);

// True when `path` is an ELF shared object (ET_DYN) readable by us.
bool is_shared_library(const std::string& path, std::string& why_not);

}  // namespace mh
