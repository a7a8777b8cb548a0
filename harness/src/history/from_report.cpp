// Report runs as the store keeps them (see from_report.h).
#include "history/from_report.h"

#include <fmt/format.h>

#include "core/metrics.h"

namespace mh::history {

namespace {

// FNV-1a over 128 bits: a run's identity, stable across machines and builds
// (std::hash is neither), and wide enough that two runs never share one.
std::string content_hash(const std::string& text) {
  using u128 = unsigned __int128;
  const u128 prime = (u128(1) << 88) + 0x13b;
  u128 h = (u128(0x6c62272e07bb0142ULL) << 64) | 0x62b821756295c58dULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= prime;
  }
  return fmt::format("{:016x}{:016x}", uint64_t(h >> 64), uint64_t(h));
}

// What tells one run from every other: where and when its report was begun,
// and the run's place in it. It survives a report written and read back.
// A context string, "" when absent or not a string (a report of an older harness).
std::string text(const Json& context, const char* key) {
  const auto it = context.find(key);
  return it != context.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string run_identity(const Json& context, const RunRecord& r) {
  return Json{text(context, "date"), text(context, "host"), r.workload, r.params, r.allocator.name,
              r.role,                    r.repetition,              r.wall_ms,  status_name(r.status)}
      .dump();
}

std::map<std::string, StoredValue> values_of(const RunRecord& r) {
  std::map<std::string, StoredValue> out;
  for (const auto& m : run_metrics(r)) out[m.name] = {m.value.value, m.value.above, m.value.reason};
  return out;
}

}  // namespace

std::pair<std::string, std::string> split_pin(const std::string& allocator) {
  const auto at = allocator.find('@');
  if (at == std::string::npos) return {allocator, ""};
  const auto colon = allocator.find(':', at);
  const std::string rev = allocator.substr(at + 1, colon == std::string::npos ? std::string::npos : colon - at - 1);
  return {allocator.substr(0, at) + (colon == std::string::npos ? "" : allocator.substr(colon)), rev};
}

std::vector<StoredRun> stored_runs(const ReportData& report, const std::string& machine) {
  const Json& c = report.context;
  std::vector<StoredRun> out;
  for (const auto& r : report.runs) {
    StoredRun s;
    s.hash = content_hash(run_identity(c, r));
    s.workload = r.workload;
    s.params = r.params.dump();
    std::tie(s.allocator, s.allocator_revision) = split_pin(r.allocator.name);
    s.revision = s.allocator_revision;
    s.machine = machine.empty() ? text(c, "host") : machine;
    s.cpu_model = text(c, "cpu_model");
    s.kernel = text(c, "kernel");
    s.thp = text(c, "thp");
    s.harness_version = text(c, "harness_version");
    s.date = text(c, "date");
    s.status = status_name(r.status);
    s.role = r.role;
    s.repetition = r.repetition;
    s.values = values_of(r);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace mh::history
