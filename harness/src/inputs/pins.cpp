// Pins files and allocator builds from repositories (see pins.h).
#include "inputs/pins.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/record.h"
#include "inputs/allocators.h"
#include "sys/json_read.h"
#include "sys/output_file.h"
#include "sys/spawn.h"

namespace mh {

namespace fs = std::filesystem;

namespace {

// The registry's families a pin can be of (glibc is not preloaded), and none.
std::vector<std::string> pin_families() {
  std::vector<std::string> out;
  for (const auto& f : builtin_allocator_names())
    if (f != "glibc") out.push_back(f);
  out.push_back("none");
  return out;
}

std::string joined_items(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::string tail(const std::string& s, size_t n = 2000) { return s.size() > n ? s.substr(s.size() - n) : s; }

// The last `n` non-empty lines of a build step's output, indented, for a message.
std::string last_lines(const std::string& text, size_t n = 20) {
  std::vector<std::string> lines;
  std::istringstream in(tail(text, 8000));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  if (lines.empty()) return "  (the step printed nothing)";
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    out += (out.empty() ? "  " : "\n  ") + lines[i];
  return out;
}

// The first line of a git answer.
std::string first_line_of(const std::string& s) { return s.substr(0, s.find('\n')); }

Captured git(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/git"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_capture(argv, kGitTimeoutS);
}

// execvp's lookup for a build step's program.
std::string in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string substitute(std::string s, const std::map<std::string, std::string>& vars) {
  for (const auto& [key, value] : vars)
    for (size_t at; (at = s.find(key)) != std::string::npos;) s.replace(at, key.size(), value);
  return s;
}

// FNV-1a: a stable short name for a text.
std::string short_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:08x}", uint32_t(h ^ (h >> 32)));
}

// The build recipe's: a changed recipe is another cache entry.
std::string recipe_key(const RepoPin& pin) { return short_hash(json_text(Json{pin.build, pin.library, pin.family})); }

std::optional<RepoPin> read_repo_pin(const std::string& name, const Json& j, const std::string& where,
                                     std::string& error) {
  RepoPin p;
  p.name = name;
  auto text = [&](const char* key, std::string& out) {
    if (!j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty()) {
      error = where + ": \"" + key + "\" must be a non-empty string";
      return false;
    }
    out = j[key].get<std::string>();
    return true;
  };
  if (!text("repository", p.repository) || !text("library", p.library) || !text("family", p.family))
    return std::nullopt;
  if (const auto valid = pin_families(); std::find(valid.begin(), valid.end(), p.family) == valid.end()) {
    error = where + ": unknown family '" + p.family + "'; valid: " + joined_items(valid);
    return std::nullopt;
  }
  const Json build = j.value("build", Json());
  if (!build.is_array() || build.empty()) {
    error = where + ": \"build\" must be a list of commands, each a list of strings";
    return std::nullopt;
  }
  for (const auto& step : build) {
    std::vector<std::string> argv;
    if (step.is_array())
      for (const auto& a : step)
        if (a.is_string()) argv.push_back(a.get<std::string>());
    if (argv.empty() || argv.size() != step.size()) {
      error = where + ": \"build\" step " + json_text(step) + " is not a non-empty list of strings";
      return std::nullopt;
    }
    p.build.push_back(std::move(argv));
  }
  return p;
}

}  // namespace

std::optional<PinsFile> load_pins(const std::string& path, std::string& error) {
  PinsFile out;
  if (std::ifstream in(path); !in) return out;  // no pins file: no names
  auto j = read_json_file(path, kFileLimits, error);
  if (!j || !j->is_object()) {
    error = "the pins file " + (j ? path + " is not a JSON object" : error);
    return std::nullopt;
  }
  const Json pins = j->value("pins", Json::object());
  if (!pins.is_object()) {
    error = path + ": pins: expected an object, found " + json_found(pins);
    return std::nullopt;
  }
  for (const auto& [name, v] : pins.items()) {
    if (v.is_string()) {
      out.specs[name] = v.get<std::string>();
    } else if (v.is_object()) {
      auto p = read_repo_pin(name, v, path + ": pin '" + name + "'", error);
      if (!p) return std::nullopt;
      out.repos[name] = std::move(*p);
    } else {
      error = path + ": pin '" + name + "' must be an allocator spec (a string) or a repository (an object)";
      return std::nullopt;
    }
  }
  return out;
}

namespace {

// A URL git understands (scheme://..., or scp-like host:path), not a path.
bool is_url(const std::string& source) {
  const auto colon = source.find(':');
  return source.find("://") != std::string::npos || (colon != std::string::npos && colon < source.find('/'));
}

}  // namespace

std::optional<PinSources> parse_pin_sources(const std::string& text, std::string& error) {
  PinSources out;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      error = "bad entry '" + item + "': expected PIN=SOURCE or REPOSITORY=SOURCE, separated by commas";
      return std::nullopt;
    }
    std::string source = item.substr(eq + 1);
    if (!is_url(source)) {
      std::error_code ec;
      if (!fs::exists(source, ec)) {
        error = "bad entry '" + item + "': " + source + " does not exist (a source is a local clone, a git bundle " +
                "or a URL)";
        return std::nullopt;
      }
      source = fs::absolute(source).lexically_normal().string();
    }
    out[item.substr(0, eq)] = source;
  }
  return out;
}

bool apply_pin_sources(PinsFile& file, const PinSources& sources, std::string& error) {
  std::map<std::string, std::string> by_name;  // pin -> source, a name's own entry first
  for (const auto& [key, source] : sources) {
    bool known = false;
    for (const auto& [name, pin] : file.repos)
      if (pin.repository == key) {
        known = true;
        by_name.emplace(name, source);
      }
    if (file.repos.count(key)) known = true;
    if (!known) {
      std::vector<std::string> names;
      for (const auto& [name, pin] : file.repos) names.push_back(name);
      error = "'" + key + "' is neither a pin with a repository nor the repository of one; pins with one: " +
              (names.empty() ? "none" : joined_items(names));
      return false;
    }
  }
  for (const auto& [key, source] : sources)
    if (file.repos.count(key)) by_name[key] = source;
  for (const auto& [name, source] : by_name) file.repos[name].repository = source;
  return true;
}

std::optional<PinRevision> parse_pin_revision(const std::string& text) {
  const auto at = text.find('@');
  if (at == std::string::npos || at == 0) return std::nullopt;
  // NAME=/path@x is a library path, not a revision.
  if (text.find('=') != std::string::npos && text.find('=') < at) return std::nullopt;
  PinRevision p;
  p.name = text.substr(0, at);
  std::string rest = text.substr(at + 1);
  const auto colon = rest.find(':');
  p.rev = rest.substr(0, colon);
  if (colon != std::string::npos) p.options = rest.substr(colon + 1);
  if (p.rev.empty()) return std::nullopt;
  return p;
}

std::optional<std::string> resolve_commit(const std::string& repo, const std::string& rev, std::string& error) {
  auto r = git({"-C", repo, "rev-parse", "--verify", "--quiet", rev + "^{commit}"});
  if (r.timed_out) {
    error = "git rev-parse in " + repo + " did not finish within " + std::to_string(int(kGitTimeoutS)) + " s";
    return std::nullopt;
  }
  if (r.exit_code != 0) {
    error = "unknown revision '" + rev + "' in " + repo;
    return std::nullopt;
  }
  return first_line_of(r.out);
}

namespace {

// "mimalloc-1a2b3c4d.git" for https://github.com/microsoft/mimalloc or
// /srv/mimalloc.bundle: a readable stem and the hash of the whole source.
std::string mirror_name(const std::string& repository) {
  std::string stem = fs::path(repository).filename().string();
  for (const char* ext : {".git", ".bundle"})
    if (stem.size() > std::strlen(ext) && stem.ends_with(ext)) stem.resize(stem.size() - std::strlen(ext));
  for (auto& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  if (stem.empty() || stem[0] == '.') stem = "repo" + stem;
  return stem + "-" + short_hash(repository) + ".git";
}

}  // namespace

std::optional<std::string> pin_repository(const RepoPin& pin, const PinPaths& paths, const std::string& rev,
                                          std::string& error) {
  if (pin.repository == "{memharness}") return paths.memharness_source;
  std::error_code ec;
  if (fs::is_directory(pin.repository, ec)) return fs::absolute(pin.repository).lexically_normal().string();
  // A URL or a bundle: a mirror of it in the cache, fetched again when it
  // lacks the revision. Named by what it mirrors, so that pins of one
  // repository share it and a pin pointed elsewhere gets a mirror of its own.
  const std::string mirror = (fs::path(paths.cache) / "repos" / mirror_name(pin.repository)).string();
  if (!fs::exists(mirror)) {
    fs::create_directories(fs::path(mirror).parent_path(), ec);
    std::cerr << "harness: cloning " << pin.repository << " for pin " << pin.name << "\n";
    auto c = git({"clone", "--quiet", "--mirror", "--", pin.repository, mirror});
    if (c.exit_code != 0) {
      fs::remove_all(mirror, ec);
      error = "pin '" + pin.name + "': cannot clone " + pin.repository +
              (c.timed_out ? ": it did not finish within " + std::to_string(int(kGitTimeoutS)) + " s"
                           : ": " + tail(c.err.substr(0, c.err.find_last_not_of(" \n") + 1), 500)) +
              "\nTo build it from a local clone or git bundle instead: MEMHARNESS_PIN_SOURCES=" + pin.name +
              "=/path/to/clone-or.bundle (docs/allocators.md#pins-built-from-a-local-source)";
      return std::nullopt;
    }
  } else if (std::string ignored; !resolve_commit(mirror, rev, ignored)) {
    git({"-C", mirror, "remote", "update", "--prune"});
  }
  return mirror;
}

namespace {

// A file's SHA-256 by coreutils' sha256sum; "" when it cannot be read.
std::string sha256_of(const fs::path& file) {
  auto r = run_capture({"/usr/bin/sha256sum", "--", file.string()}, kGitTimeoutS);
  if (r.exit_code != 0) return "";
  const std::string hash = r.out.substr(0, r.out.find(' '));
  return hash.size() == 64 ? hash : "";
}

// "" when `path` (not followed if a link) belongs to this user or root and no one
// else may write it; else why not.
std::string not_ours(const fs::path& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return path.string() + " is missing";
  if (st.st_uid != geteuid() && st.st_uid != 0) return fmt::format("{} belongs to user {}", path.string(), st.st_uid);
  if (!S_ISLNK(st.st_mode) && (st.st_mode & (S_IWGRP | S_IWOTH)))
    return fmt::format("{} may be written by others (mode {:o})", path.string(), st.st_mode & 07777);
  return "";
}

// The stamp of a finished build: what was built and the library's hash.
Json stamp_of(const RepoPin& pin, const std::string& commit, const std::string& sha256) {
  return Json{{"commit", commit}, {"recipe", recipe_key(pin)}, {"library", pin.library}, {"sha256", sha256}};
}

// "" when the cache entry `dir` can be used as the build of `pin` at `commit`:
// the folder, the stamp, the library and the folders between are this user's
// (or root's) and writable by no one else, and the stamp names this commit,
// recipe and library with the library's SHA-256 (a half-written or corrupted
// entry fails there). Otherwise why it cannot.
std::string untrusted_entry(const fs::path& dir, const RepoPin& pin, const std::string& commit, const fs::path& lib) {
  for (fs::path p : {dir, dir / "built"})
    if (auto why = not_ours(p); !why.empty()) return why;
  for (fs::path p = lib; p != dir && p.has_relative_path(); p = p.parent_path())
    if (auto why = not_ours(p); !why.empty()) return why;
  std::error_code ec;
  if (const fs::path target = fs::canonical(lib, ec); ec) return lib.string() + " cannot be resolved";
  else if (auto why = not_ours(target); !why.empty()) return why;
  std::string unreadable;
  const Json stamp = read_json_file((dir / "built").string(), kFileLimits, unreadable).value_or(Json());
  const Json want = stamp_of(pin, commit, sha256_of(lib));
  if (!stamp.is_object()) return "its stamp is not a build record";
  for (const auto& [key, value] : want.items())
    if (stamp.value(key, Json()) != value) return fmt::format("its stamp's {} does not match", key);
  return "";
}

// Runs the pin's build steps in `source` and `build_dir`, logging into `log`.
bool run_build_steps(const RepoPin& pin, const std::string& sha, const fs::path& source, const fs::path& build_dir,
                     const fs::path& log_path, std::ofstream& log, std::string& error) {
  const std::map<std::string, std::string> vars = {
      {"{source}", source.string()},
      {"{build}", build_dir.string()},
      {"{jobs}", std::to_string(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)))}};
  for (const auto& step : pin.build) {
    std::vector<std::string> argv;
    for (const auto& a : step) argv.push_back(substitute(a, vars));
    std::string shown;
    for (const auto& a : argv) shown += (shown.empty() ? "" : " ") + a;
    log << "$ " << shown << "\n";
    const std::string program = in_path(argv[0]);
    if (program.empty()) {
      log << argv[0] << ": not found in PATH\n";
      error = fmt::format("building pin '{}' at {} failed: '{}' is not found in PATH; the log is {}", pin.name,
                          sha.substr(0, 12), argv[0], log_path.string());
      return false;
    }
    argv[0] = program;
    auto r = run_capture(argv, kBuildTimeoutS);
    log << r.out << r.err;
    log.flush();
    if (r.exit_code != 0) {
      error = fmt::format("building pin '{}' at {} failed: `{}` {}; the log is {}, ending:\n{}", pin.name,
                          sha.substr(0, 12), shown,
                          r.timed_out ? fmt::format("did not finish within {} s", int(kBuildTimeoutS))
                                      : fmt::format("exited with status {}", r.exit_code),
                          log_path.string(), last_lines(r.out + r.err));
      return false;
    }
  }
  return true;
}

// The tree of `sha` from `repo`, extracted into `source`.
bool extract_tree(const RepoPin& pin, const std::string& repo, const std::string& sha, const fs::path& dir,
                  const fs::path& source, std::ofstream& log, std::string& error) {
  std::error_code ec;
  const std::string tar = (dir / "src.tar").string();
  auto archive = git({"-C", repo, "archive", "--format=tar", "-o", tar, sha});
  auto untar = archive.exit_code == 0 ? run_capture({"/bin/tar", "-xf", tar, "-C", source.string()}, kGitTimeoutS)
                                      : archive;
  fs::remove(tar, ec);
  if (untar.exit_code == 0) return true;
  log << archive.err << untar.err;
  error = "pin '" + pin.name + "': cannot extract " + sha.substr(0, 12) + " of " + repo + ": " + tail(untar.err, 500);
  return false;
}

// Wall and CPU time since it was made. The CPU time is that of the processes
// the harness waited for since (the build's steps and everything they waited
// for: the compilers), user and system.
class BuildClock {
 public:
  std::string since() const {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return fmt::format("{:.1f} s, CPU {:.1f} s", wall, children_cpu_s() - cpu_);
  }

 private:
  static double children_cpu_s() {
    rusage ru{};
    getrusage(RUSAGE_CHILDREN, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  }
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double cpu_ = children_cpu_s();
};

// No one else may write what the build made: what makes a cache entry usable.
void make_private(const fs::path& dir) {
  std::error_code ec;
  const auto others = fs::perms::group_write | fs::perms::others_write;
  fs::permissions(dir, others, fs::perm_options::remove, ec);
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (!it->is_symlink(ec)) fs::permissions(it->path(), others, fs::perm_options::remove, ec);
}

}  // namespace

std::optional<BuiltPin> build_pin(const RepoPin& pin, const std::string& rev, const PinPaths& paths,
                                  std::string& error) {
  auto repo = pin_repository(pin, paths, rev, error);
  if (!repo) return std::nullopt;
  auto sha = resolve_commit(*repo, rev, error);
  if (!sha) {
    error = "pin '" + pin.name + "': " + error;
    return std::nullopt;
  }
  BuiltPin out;
  out.commit = *sha;
  const fs::path dir = fs::path(paths.cache) / (pin.name + "-" + sha->substr(0, 12) + "-" + recipe_key(pin));
  out.dir = dir.string();
  const fs::path build_dir = dir / "build", source = dir / "src", log_path = dir / "build.log";
  const fs::path lib = build_dir / pin.library;
  out.library = lib.lexically_normal().string();
  std::error_code ec;
  if (fs::exists(dir / "built", ec)) {
    const std::string why = untrusted_entry(dir, pin, *sha, lib);
    if (why.empty()) {
      out.cache = "reused";
      std::cerr << "harness: " << pin.name << " at " << sha->substr(0, 12) << ": the cached build " << dir.string()
                << "\n";
      return out;
    }
    out.cache = "rebuilt: the cached build was not used: " + why;
    std::cerr << "harness: not using the cached build " << dir.string() << ": " << why << "; building it again\n";
  } else {
    out.cache = "built";
  }
  // Built from scratch: a folder without the stamp is a build that failed or
  // was stopped, one with a stamp that is not to be trusted is replaced.
  fs::remove_all(dir, ec);
  fs::create_directories(source, ec);
  fs::create_directories(build_dir, ec);
  std::ofstream log(log_path);
  const BuildClock clock;
  std::cerr << "harness: building " << pin.name << " at " << sha->substr(0, 12) << " into " << dir.string()
            << " (log: " << log_path.string() << ")\n";
  if (!extract_tree(pin, *repo, *sha, dir, source, log, error)) return std::nullopt;
  if (!run_build_steps(pin, *sha, source, build_dir, log_path, log, error)) return std::nullopt;
  if (!fs::exists(lib)) {
    error = fmt::format("building pin '{}' at {} made no {} (the pin's \"library\", under {}); the log is {}", pin.name,
                        sha->substr(0, 12), pin.library, build_dir.string(), log_path.string());
    return std::nullopt;
  }
  make_private(dir);
  if (auto e = output_file::write_atomic((dir / "built").string(), json_text(stamp_of(pin, *sha, sha256_of(lib))) + "\n");
      !e.empty()) {
    error = "pin '" + pin.name + "': " + e;
    return std::nullopt;
  }
  log << "built in " << clock.since() << "\n";
  std::cerr << "harness: built " << pin.name << " at " << sha->substr(0, 12) << " in " << clock.since() << "\n";
  return out;
}

std::optional<std::vector<std::string>> commits_between(const std::string& repo, const std::string& good,
                                                        const std::string& bad, bool first_parent,
                                                        std::string& error) {
  auto ancestor = git({"-C", repo, "merge-base", "--is-ancestor", good, bad});
  if (ancestor.exit_code != 0) {
    error = "the good revision " + good.substr(0, 12) + " is not an ancestor of the bad one " + bad.substr(0, 12);
    return std::nullopt;
  }
  std::vector<std::string> args = {"-C", repo, "rev-list", "--reverse"};
  if (first_parent) args.push_back("--first-parent");
  args.push_back(good + ".." + bad);
  auto r = git(args);
  if (r.exit_code != 0) {
    error = "git rev-list in " + repo + " failed: " + tail(r.err, 500);
    return std::nullopt;
  }
  std::vector<std::string> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

std::string commit_subject(const std::string& repo, const std::string& commit) {
  auto r = git({"-C", repo, "log", "-1", "--format=%s", commit});
  return r.exit_code == 0 ? first_line_of(r.out) : "";
}

std::optional<int64_t> first_parent_position(const std::string& repo, const std::string& commit) {
  auto r = git({"-C", repo, "rev-list", "--first-parent", "--count", commit, "--"});
  if (r.exit_code != 0) return std::nullopt;
  try {
    return std::stoll(r.out);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace mh
