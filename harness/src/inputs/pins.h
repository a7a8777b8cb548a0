// Pins: named allocator builds. A pins file ({"pins": {...}}) names specs a
// project uses ("jemalloc-bg": "jemalloc:background_thread=true"), and
// repositories an allocator can be built from at any revision:
//
//   "mimalloc-fork": {"repository": "https://host/mimalloc.git",
//                     "build": [["cmake", "-S", "{source}", "-B", "{build}"],
//                               ["cmake", "--build", "{build}", "-j", "{jobs}"]],
//                     "library": "libmimalloc.so", "family": "mimalloc"}
//
// NAME@REV[:options] then builds that repository at REV (each argv run without a
// shell; {source} the checked-out tree, {build} the build folder, {jobs} the
// CPUs; the library path is relative to {build}) into a cache keyed by the
// commit and the recipe, and is an allocator like any other. "{memharness}" as
// the repository is this project's own tree (scav@REV). Main thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mh {

struct RepoPin {
  std::string name;
  std::string repository;                       // a path, a URL git understands, or {memharness}
  std::vector<std::vector<std::string>> build;  // argv lists
  std::string library;                          // the built library, relative to {build}
  std::string family;                           // jemalloc, mimalloc, tcmalloc, scav or none
};

struct PinsFile {
  std::map<std::string, std::string> specs;  // name -> allocator spec
  std::map<std::string, RepoPin> repos;      // name -> how to build it
};
// Reads a pins file; nullopt with a message naming the file and the bad entry.
std::optional<PinsFile> load_pins(const std::string& path, std::string& error);

// Local sources that pins are built from instead of their repositories
// (MEMHARNESS_PIN_SOURCES): "KEY=SOURCE[,KEY=SOURCE...]", where KEY is a pin's
// name or a repository as the pins file gives it (then every pin of that
// repository), and SOURCE a local clone, a git bundle or any URL git
// understands. A local SOURCE must exist and is made absolute.
using PinSources = std::map<std::string, std::string>;
std::optional<PinSources> parse_pin_sources(const std::string& text, std::string& error);
// Points the pins of `file` at their sources, a pin's own name winning over
// its repository; false naming a key that is neither a pin with a repository
// nor the repository of one.
bool apply_pin_sources(PinsFile& file, const PinSources& sources, std::string& error);

// "NAME@REV[:options]": the pin's name, the revision and any options.
struct PinRevision {
  std::string name, rev, options;
};
std::optional<PinRevision> parse_pin_revision(const std::string& text);

struct PinPaths {
  std::string memharness_source;  // this project's tree ({memharness})
  std::string cache;              // where builds and mirrors of URLs go
};

// The repository git works in: a local path as it is, a URL mirrored into the
// cache (fetched again when `rev` is not there yet).
std::optional<std::string> pin_repository(const RepoPin& pin, const PinPaths& paths, const std::string& rev,
                                          std::string& error);
// The full commit `rev` names in `repo`; nullopt with a message naming it.
std::optional<std::string> resolve_commit(const std::string& repo, const std::string& rev, std::string& error);

struct BuiltPin {
  std::string library;  // absolute path of the built library
  std::string commit;   // full hash
  std::string dir;      // the cache folder
  std::string cache;    // "built", "reused", or "rebuilt: " and why the cached build was not used
};
// Builds `pin` at `rev` unless the cache has it (cache/<name>-<commit>-<recipe>/);
// the build's output goes to a log file that a failure names. The cache may be
// shared (MEMHARNESS_PIN_CACHE): an entry is used only if its folder, stamp and
// library are this user's (or root's), writable by no one else, and the stamp
// records this commit, recipe and library with the library's SHA-256; any other
// entry is built again (`cache` says why).
std::optional<BuiltPin> build_pin(const RepoPin& pin, const std::string& rev, const PinPaths& paths,
                                  std::string& error);

// The first-parent commits after `good` up to and including `bad`, oldest first.
std::optional<std::vector<std::string>> commits_between(const std::string& repo, const std::string& good,
                                                        const std::string& bad, bool first_parent,
                                                        std::string& error);
// How many commits the first-parent line up to `commit` holds: its place in
// first-parent order (a history's revisions are sorted by it); nullopt when
// git cannot tell.
std::optional<int64_t> first_parent_position(const std::string& repo, const std::string& commit);
// The subject line of a commit ("" if unknown).
std::string commit_subject(const std::string& repo, const std::string& commit);

}  // namespace mh
