// Programs as workloads: resolution and checks (see program.h).
#include "inputs/program.h"

#include "core/escape.h"
#include "sys/json_read.h"
#include "sys/pattern.h"
#include "inputs/allocators.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

namespace mh {

namespace {

const std::set<std::string>& known_keys() {
  static const std::set<std::string> k = {"command",   "name",       "cwd",           "env",        "stdin",
                                          "expect_exit", "mark_on_output", "mark_at", "load",       "ready",
                                          "ready_port", "ready_timeout", "idle",       "stop_grace", "load_metric",
                                          "tree",      "exit_stop",  "setup",      "not_under"};
  return k;
}

std::string join_set(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

bool string_list(const Json& j, const char* key, std::vector<std::string>& out, std::string& error) {
  if (!j.contains(key)) return true;
  const Json& v = j[key];
  if (!v.is_array()) {
    error = std::string(key) + " must be a list of strings, not " + json_text(v);
    return false;
  }
  for (const auto& e : v) {
    if (!e.is_string()) {
      error = std::string(key) + " must be a list of strings; " + json_text(e) + " is not a string";
      return false;
    }
    out.push_back(e.get<std::string>());
  }
  return true;
}

// A string, when `key` is there (out keeps its default otherwise).
bool string_field(const Json& j, const char* key, std::string& out, std::string& error) {
  if (!j.contains(key)) return true;
  if (!j[key].is_string()) {
    error = std::string(key) + " must be a string, not " + json_found(j[key]);
    return false;
  }
  out = j[key].get<std::string>();
  return true;
}

bool json_number(const Json& j, const char* key, double min, double max, double& out, std::string& error) {
  if (!j.contains(key)) return true;
  const Json& v = j[key];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < min || v.get<double>() > max) {
    error = std::string(key) + " " + json_text(v) + " is not a number from " + std::to_string(int64_t(min)) + " to " +
            std::to_string(int64_t(max));
    return false;
  }
  out = v.get<double>();
  return true;
}

bool compiles(const std::string& regex, const std::string& what, std::string& error) {
  std::string why;
  if (Pattern::compile(regex, why)) return true;
  error = what + " '" + regex + "' is not a POSIX extended regular expression RE2 takes (" + why +
          "; back-references are not taken)";
  return false;
}

bool is_mark_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// "TEXT[=NAME]": NAME after the last '=' when it is a mark name (letters,
// digits, - _ .), else the whole text.
std::pair<std::string, std::string> with_name(const std::string& text) {
  auto eq = text.rfind('=');
  if (eq != std::string::npos && is_mark_name(text.substr(eq + 1))) return {text.substr(0, eq), text.substr(eq + 1)};
  return {text, ""};
}

bool is_executable_file(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The program and its checks: found (exit 2 otherwise, naming it).
bool resolve(const std::string& name, const char* what, std::string& path, std::string& error) {
  const char* p = std::getenv("PATH");
  path = find_in_path(name, p ? p : "/usr/local/bin:/usr/bin:/bin");
  if (path.empty()) {
    error = std::string(what) + " '" + name + "' not found" +
            (name.find('/') != std::string::npos ? " (or not an executable file)" : " in PATH");
    return false;
  }
  return true;
}

// A second command given as one string ("PROGRAM ARGS", split like shell
// words): its argv and where its program is, when `key` is there.
bool json_words(const Json& j, const char* key, const char* what, std::vector<std::string>& argv,
                   std::string& path, std::string& error) {
  std::string text;
  if (!string_field(j, key, text, error)) return false;
  if (text.empty()) return true;
  auto words = split_words(text);
  if (!words || words->empty()) {
    error = std::string("--") + key + " '" + text + "' is not a command (an open quote?)";
    return false;
  }
  argv = *words;
  return resolve(argv[0], what, path, error);
}

}  // namespace

std::string find_in_path(const std::string& name, const std::string& path_variable) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : "";
  size_t pos = 0;
  while (pos <= path_variable.size()) {
    size_t colon = path_variable.find(':', pos);
    if (colon == std::string::npos) colon = path_variable.size();
    std::string dir = path_variable.substr(pos, colon - pos);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    pos = colon + 1;
  }
  return "";
}

std::optional<std::vector<std::string>> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < text.size()) word += text[++i];
      else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) return std::nullopt;
  if (in_word) words.push_back(word);
  return words;
}

std::string preload_obstacle(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";  // the exec will say what is wrong
  struct stat st{};
  fstat(fd, &st);
  char head[256] = {};
  ssize_t n = pread(fd, head, sizeof head - 1, 0);
  std::string secure;
  if ((st.st_mode & S_ISUID) && st.st_uid != geteuid()) secure = "setuid";
  else if ((st.st_mode & S_ISGID) && st.st_gid != getegid()) secure = "setgid";
  if (!secure.empty()) {
    ::close(fd);
    return path + " is " + secure + ": the loader runs it in secure mode and ignores LD_PRELOAD, so the allocator "
                  "under test would not be the one serving malloc";
  }
  if (n > 2 && head[0] == '#' && head[1] == '!') {
    ::close(fd);
    std::string line(head + 2, strcspn(head + 2, "\n"));
    auto words = split_words(line);
    if (!words || words->empty()) return "";
    return preload_obstacle((*words)[0]);
  }
  Elf64_Ehdr h{};
  bool elf = pread(fd, &h, sizeof h, 0) == ssize_t(sizeof h) && std::memcmp(h.e_ident, ELFMAG, SELFMAG) == 0 &&
             h.e_ident[EI_CLASS] == ELFCLASS64;
  bool interp = false;
  for (int i = 0; elf && i < h.e_phnum && !interp; ++i) {
    Elf64_Phdr ph{};
    if (pread(fd, &ph, sizeof ph, off_t(h.e_phoff + uint64_t(i) * h.e_phentsize)) == ssize_t(sizeof ph))
      interp = ph.p_type == PT_INTERP;
  }
  ::close(fd);
  if (elf && !interp)
    return path + " is a static binary (no PT_INTERP: no dynamic loader runs, so LD_PRELOAD has no effect and which "
                  "malloc it uses cannot be checked)";
  return "";
}

namespace {

// An object of the known keys only.
bool check_keys(const Json& j, std::string& error) {
  if (!j.is_object()) {
    error = "a command entry must be an object, not " + json_text(j);
    return false;
  }
  for (const auto& [key, v] : j.items())
    if (!known_keys().count(key)) {
      error = "unknown key '" + key + "' in a command entry; valid: " + join_set(known_keys());
      return false;
    }
  return true;
}

// A whole number from `min` to `max` (json_number() does the checking), when `key` is there.
bool whole_number(const Json& j, const char* key, int min, int max, int& out, std::string& error) {
  double v = out;
  if (!json_number(j, key, min, max, v, error)) return false;
  out = int(v);
  return true;
}

// The program, found, and what its results are called.
bool read_command(const Json& j, Program& p, std::string& error) {
  if (!string_list(j, "command", p.argv, error)) return false;
  if (p.argv.empty() || p.argv[0].empty()) {
    error = "no program given: harness [OPTIONS] -- PROGRAM [ARGS...]";
    return false;
  }
  if (!resolve(p.argv[0], "program", p.path, error)) return false;
  p.name = std::filesystem::path(p.argv[0]).filename().string();
  if (!string_field(j, "name", p.name, error)) return false;
  if (!is_mark_name(p.name)) {
    error = "--name '" + p.name + "' is not a name: use letters, digits, '-', '_' and '.'";
    return false;
  }
  return true;
}

// KEY=VALUE pairs added to its environment; never what the harness sets itself.
bool read_env(const Json& j, Program& p, std::string& error) {
  std::vector<std::string> items;
  if (!string_list(j, "env", items, error)) return false;
  for (const auto& kv : items) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "--env '" + kv + "' is not KEY=VALUE";
      return false;
    }
    const std::string key = kv.substr(0, eq);
    if (key == "LD_PRELOAD" || key.rfind("MEMHARNESS_", 0) == 0) {
      error = "--env " + key + ": the harness sets it (the allocator is chosen with --allocator)";
      return false;
    }
    p.env.emplace_back(key, kv.substr(eq + 1));
  }
  return true;
}

// Where it runs: its folder, its environment, its standard input, the exit it should end with.
bool read_surroundings(const Json& j, Program& p, std::string& error) {
  if (!string_field(j, "cwd", p.cwd, error)) return false;
  if (!p.cwd.empty() && !std::filesystem::is_directory(p.cwd)) {
    error = "--cwd '" + p.cwd + "' is not a folder";
    return false;
  }
  if (!read_env(j, p, error)) return false;
  if (!string_field(j, "stdin", p.stdin_path, error)) return false;
  if (!p.stdin_path.empty() && access(p.stdin_path.c_str(), R_OK) != 0) {
    error = "--stdin '" + p.stdin_path + "' cannot be read: " + std::strerror(errno);
    return false;
  }
  return whole_number(j, "expect_exit", 0, 255, p.expect_exit, error);
}

// Marks at output lines that match a regex, and at times after the start.
bool read_marks(const Json& j, Program& p, std::string& error) {
  std::vector<std::string> items;
  if (!string_list(j, "mark_on_output", items, error)) return false;
  for (const auto& text : items) {
    auto [regex, name] = with_name(text);
    if (!compiles(regex, "--mark-on-output", error)) return false;
    p.output_marks.push_back({regex, name.empty() ? regex : name});
  }
  items.clear();
  if (!string_list(j, "mark_at", items, error)) return false;
  for (const auto& text : items) {
    auto [ms, name] = with_name(text);
    char* end = nullptr;
    double v = std::strtod(ms.c_str(), &end);
    if (ms.empty() || *end != '\0' || !std::isfinite(v) || v < 0) {
      error = "--mark-at '" + text + "' is not MS[=NAME] (milliseconds after the start, e.g. 500=warm)";
      return false;
    }
    p.timed_marks.push_back({v, name.empty() ? "at-" + ms + "ms" : name});
  }
  return true;
}

// The allocator families it cannot be measured under, each with why.
bool read_not_under(const Json& j, Program& p, std::string& error) {
  if (!j.contains("not_under")) return true;
  std::set<std::string> families;
  for (const auto& n : builtin_allocator_names()) families.insert(n);
  families.insert("custom");
  const Json& v = j["not_under"];
  if (!v.is_object()) {
    error = "not_under must be an object of allocator families and why, not " + json_text(v);
    return false;
  }
  for (const auto& [family, why] : v.items()) {
    if (!families.count(family) || !why.is_string() || why.get<std::string>().empty()) {
      error = "not_under: '" + family + "': " + json_text(why) + " is not a family with why; families: " + join_set(families);
      return false;
    }
    p.not_under[family] = why.get<std::string>();
  }
  return true;
}

// A server's life: when it is ready, how long it idles after the load, how
// long it has to stop.
bool read_server_life(const Json& j, Program& p, std::string& error) {
  if (!string_field(j, "ready", p.ready_regex, error)) return false;
  if (!p.ready_regex.empty() && !compiles(p.ready_regex, "--ready", error)) return false;
  if (j.contains("ready_port") && j["ready_port"].is_string()) {
    if (j["ready_port"].get<std::string>() != "auto") {
      error = "ready_port " + escape::terminal(j["ready_port"].get<std::string>()) +
              ": give a port (1 to 65535) or auto (a free port for each run, written where the command, the load "
              "or an environment value says {port})";
      return false;
    }
    p.ready_port_auto = true;
  } else if (!whole_number(j, "ready_port", 1, 65535, p.ready_port, error)) {
    error += ", or auto (a free port for each run)";
    return false;
  }
  if (!json_number(j, "ready_timeout", 0.1, 86400, p.ready_timeout_s, error)) return false;
  if (j.contains("idle")) {
    double idle = 0;
    if (!json_number(j, "idle", 0, 86400, idle, error)) return false;
    p.idle_s = idle;
  }
  return json_number(j, "stop_grace", 0, 600, p.stop_grace_s, error);
}

// A true-or-false key (tree, exit_stop); absent keeps the default.
bool read_switch(const Json& j, const char* key, bool& into, std::string& error) {
  if (!j.contains(key)) return true;
  if (!j[key].is_boolean()) {
    error = std::string(key) + " " + json_text(j[key]) + " is not true or false";
    return false;
  }
  into = j[key].get<bool>();
  return true;
}

// NAME=REGEX: the load generator's figures, each the first group of a regex.
bool read_load_metrics(const Json& j, Program& p, std::string& error) {
  std::vector<std::string> items;
  if (!string_list(j, "load_metric", items, error)) return false;
  for (const auto& text : items) {
    auto eq = text.find('=');
    if (eq == std::string::npos || !is_mark_name(text.substr(0, eq))) {
      error = "--load-metric '" + text + "' is not NAME=REGEX (NAME: letters, digits, - _ .)";
      return false;
    }
    LoadMetric m{text.substr(0, eq), text.substr(eq + 1)};
    if (!compiles(m.regex, "--load-metric", error)) return false;
    if (std::string ignored; Pattern::compile(m.regex, ignored)->groups() < 1) {
      error = "--load-metric '" + text + "' has no capture group: the number is the first (...) group";
      return false;
    }
    p.load_metrics.push_back(m);
  }
  return true;
}

// Settings that need another: a load metric reads the load, the load waits for ready.
bool check_combinations(const Program& p, std::string& error) {
  if (p.load_argv.empty() && !p.load_metrics.empty()) {
    error = "--load-metric reads the load generator's output: give --load too";
    return false;
  }
  if (!p.load_argv.empty() && !p.waits_for_ready()) {
    error = "--load starts once the program is ready: give --ready REGEX or --ready-port N";
    return false;
  }
  return true;
}

}  // namespace

std::optional<Program> program_from_json(const Json& j, std::string& error) {
  // In this order, so that the first bad value is the one named.
  Program p;
  const bool ok = check_keys(j, error) && read_command(j, p, error) && read_surroundings(j, p, error) &&
                  read_marks(j, p, error) &&
                  json_words(j, "load", "load generator", p.load_argv, p.load_path, error) &&
                  json_words(j, "setup", "set-up program", p.setup_argv, p.setup_path, error) &&
                  read_not_under(j, p, error) && read_server_life(j, p, error) && read_switch(j, "tree", p.tree, error) && read_switch(j, "exit_stop", p.exit_stop, error) &&
                  read_load_metrics(j, p, error) && check_combinations(p, error);
  if (!ok) return std::nullopt;
  return p;
}

Json program_params(const Program& p) {
  // The run's identity (run hash, resume check, history key): bytes that are
  // not UTF-8 kept, escaped reversibly.
  Json env = Json::object();
  for (const auto& [k, v] : p.env) env[escape::identity(k)] = escape::identity(v);
  Json j{{"command", escape::identity(p.argv)}, {"path", escape::identity(p.path)}, {"cwd", escape::identity(p.cwd)},
         {"env", env}, {"stdin", p.stdin_path.empty() ? "/dev/null" : escape::identity(p.stdin_path)},
         {"expect_exit", p.expect_exit}};
  if (!p.output_marks.empty()) {
    Json m = Json::array();
    for (const auto& o : p.output_marks) m.push_back(Json{{"regex", o.regex}, {"name", o.name}});
    j["mark_on_output"] = m;
  }
  if (!p.timed_marks.empty()) {
    Json m = Json::array();
    for (const auto& t : p.timed_marks) m.push_back(Json{{"ms", t.ms}, {"name", t.name}});
    j["mark_at"] = m;
  }
  if (p.waits_for_ready()) {
    j["ready"] = p.ready_regex.empty() ? Json(nullptr) : Json(p.ready_regex);
    j["ready_port"] = p.ready_port_auto ? Json("auto") : p.ready_port ? Json(p.ready_port) : Json(nullptr);
    j["ready_timeout_s"] = p.ready_timeout_s;
  }
  if (!p.load_argv.empty()) j["load"] = escape::identity(p.load_argv);
  if (!p.setup_argv.empty()) j["setup"] = escape::identity(p.setup_argv);
  if (p.idle_s) j["idle_s"] = *p.idle_s;
  if (!p.tree) j["tree"] = false;  // only then: the reports before --no-tree keep their keys
  if (!p.exit_stop) j["exit_stop"] = false;
  if (!p.load_metrics.empty()) {
    Json m = Json::object();
    for (const auto& l : p.load_metrics) m[l.name] = l.regex;
    j["load_metric"] = m;
  }
  return j;
}

Program with_port(const Program& p, int port) {
  const std::string text = std::to_string(port);
  auto put = [&](std::string& s) {
    for (size_t at = s.find("{port}"); at != std::string::npos; at = s.find("{port}", at + text.size()))
      s.replace(at, 6, text);
  };
  Program out = p;
  out.ready_port = port;
  for (size_t i = 1; i < out.argv.size(); ++i) put(out.argv[i]);
  for (size_t i = 1; i < out.load_argv.size(); ++i) put(out.load_argv[i]);
  for (auto& [key, value] : out.env) put(value);
  return out;
}

}  // namespace mh
