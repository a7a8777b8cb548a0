// Report context (see context.h).
#include "report/context.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>

#include "build_info.h"
#include "core/escape.h"
#include "sys/containment.h"
#include "sys/procfs.h"
#include "sys/spawn.h"

namespace mh {

namespace {

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@%+") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string optional_first_line(const std::optional<std::string>& s) {
  if (!s) return "";
  return s->substr(0, s->find('\n'));
}

// The CPU's model name (/proc/cpuinfo's first "model name"): two machines of
// one name in a history may differ in it. "" where the kernel does not say
// (some architectures name it otherwise).
std::string cpu_model() {
  const std::string info = procfs::read_text("/proc/cpuinfo").value_or("");
  const auto at = info.find("model name");
  if (at == std::string::npos) return "";
  const auto colon = info.find(':', at), end = info.find('\n', at);
  if (colon == std::string::npos || colon > end) return "";
  const auto start = info.find_first_not_of(" \t", colon + 1);
  return start < end ? info.substr(start, end - start) : "";
}

// The first line of an identity file, escaped; null where it cannot be read
// (a container image may have none).
Json machine_id_of(const char* path) {
  const std::string id = escape::identity(optional_first_line(procfs::read_text(path)));
  return id.empty() ? Json(nullptr) : Json(id);
}

}  // namespace

BuildInfo build_info() { return {MEMHARNESS_VERSION, MEMHARNESS_GIT_REVISION, MEMHARNESS_BUILD_TYPE}; }

std::string utc_now() {
  time_t t = time(nullptr);
  tm g{};
  gmtime_r(&t, &g);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &g);
  return buf;
}

Json make_context(const std::vector<std::string>& argv) {
  utsname u{};
  uname(&u);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::string command;
  for (const auto& a : argv) {
    if (!command.empty()) command += ' ';
    command += shell_quote(escape::identity(a));
  }
  auto b = build_info();
  const std::string model = escape::shown(cpu_model());
  std::optional<int64_t> memory;
  if (auto kv = procfs::parse_kv(procfs::read_text("/proc/meminfo").value_or("")); kv.count("MemTotal"))
    memory = kv["MemTotal"];
  Json context = Json{
      {"date", utc_now()},
      {"host", escape::identity(host)},
      {"kernel", std::string(u.sysname) + " " + u.release + " " + u.version},
      {"machine", u.machine},
      {"cpus", sysconf(_SC_NPROCESSORS_ONLN)},
      {"cpu_model", model.empty() ? Json(nullptr) : Json(model)},
      {"memory_kb", memory ? Json(*memory) : Json(nullptr)},
      // One machine (a host name may be shared by containers, a machine by names) and one boot of it.
      {"machine_id", machine_id_of("/etc/machine-id")},
      {"boot_id", machine_id_of("/proc/sys/kernel/random/boot_id")},
      {"thp", procfs::parse_bracketed_choice(optional_first_line(procfs::read_text("/sys/kernel/mm/transparent_hugepage/enabled")))},
      {"thp_defrag", procfs::parse_bracketed_choice(optional_first_line(procfs::read_text("/sys/kernel/mm/transparent_hugepage/defrag")))},
      {"free_page_reporting", procfs::free_page_reporting()},
      {"harness_version", b.version},
      {"git_revision", b.git_revision},
      {"build_type", b.build_type},
      {"containment", containment::description()},
      {"command", command},
      {"argv", escape::identity(argv)},
  };
  if (model.empty()) context["cpu_model_reason"] = "/proc/cpuinfo names no model";
  if (!memory) context["memory_kb_reason"] = "MemTotal could not be read from /proc/meminfo";
  // Only when there were some: a report made outside CI reads as before.
  if (auto withheld = withheld_credentials(); !withheld.empty()) context["environment_withheld"] = withheld;
  return context;
}

}  // namespace mh
