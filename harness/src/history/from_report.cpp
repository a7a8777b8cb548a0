// Report runs as the store keeps them (see from_report.h).
#include "history/from_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

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
std::string context_text(const Json& context, const char* key) {
  const auto it = context.find(key);
  return it != context.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string run_identity(const Json& context, const RunRecord& r) {
  return json_text(Json{context_text(context, "date"), context_text(context, "host"), r.workload, r.params, r.allocator.name,
                        r.role, r.repetition, r.wall_ms, status_name(r.status)});
}

// The parameters that key a run's series. A workload's, all of them (each changes
// what is measured). A program's: none when the user named it (--name: its series
// follows the name across changed arguments and environments), else its command
// words, which tell two unnamed programs of one base name apart.
std::string series_params(const RunRecord& r) {
  if (!r.params.is_object() || !r.params.contains("command")) return json_text(r.params);
  const Json& command = r.params["command"];
  const bool by_base_name = command.is_array() && !command.empty() && command[0].is_string() &&
                            std::filesystem::path(command[0].get<std::string>()).filename() == r.workload;
  return by_base_name ? json_text(Json{{"command", command}}) : "{}";
}

std::map<std::string, StoredValue> values_of(const RunRecord& r) {
  std::map<std::string, StoredValue> out;
  for (const auto& m : run_metrics(r)) out[m.name] = {m.value.value, m.value.above, m.value.reason};
  return out;
}

// The kept indices of one stretch [from, to): its least and most RSS, in
// time order; its first sample when no RSS of it was read.
void keep_extremes(const std::vector<Sample>& samples, size_t from, size_t to, std::vector<size_t>& kept) {
  std::optional<size_t> low, high;
  for (size_t i = from; i < to; ++i) {
    if (cell_missing(samples[i], "rss_kb")) continue;
    if (!low || samples[i].rss_kb < samples[*low].rss_kb) low = i;
    if (!high || samples[i].rss_kb > samples[*high].rss_kb) high = i;
  }
  if (!low) {
    kept.push_back(from);
    return;
  }
  kept.push_back(std::min(*low, *high));
  if (*low != *high) kept.push_back(std::max(*low, *high));
}

double tenth_ms(double t) { return std::round(t * 10) / 10; }

std::optional<int64_t> sample_cell(const Sample& s, const char* column, int64_t value) {
  return cell_missing(s, column) ? std::nullopt : std::optional<int64_t>(value);
}

}  // namespace

std::vector<size_t> kept_samples(const std::vector<Sample>& samples, size_t max_points) {
  const size_t n = samples.size();
  std::vector<size_t> kept;
  if (n <= std::max<size_t>(max_points, 2)) {
    for (size_t i = 0; i < n; ++i) kept.push_back(i);
    return kept;
  }
  const size_t inner = n - 2, stretches = std::max<size_t>((max_points - 2) / 2, 1);
  kept.push_back(0);
  for (size_t b = 0; b < stretches; ++b) {
    const size_t from = 1 + b * inner / stretches, to = 1 + (b + 1) * inner / stretches;
    if (from < to) keep_extremes(samples, from, to, kept);
  }
  kept.push_back(n - 1);
  return kept;
}

RunTrace trace_of(const RunRecord& r) {
  RunTrace t;
  for (const size_t i : kept_samples(r.samples, kMaxTracePoints)) {
    const Sample& s = r.samples[i];
    t.points.push_back({tenth_ms(s.t_ms), sample_cell(s, "rss_kb", s.rss_kb), sample_cell(s, "anon_kb", s.anon_kb)});
  }
  for (size_t i = 0; i < r.marks.size() && i < kMaxTraceMarks; ++i)
    t.marks.push_back({tenth_ms(r.marks[i].t_ms), r.marks[i].name});
  return t;
}

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
    s.params = series_params(r);
    std::tie(s.allocator, s.allocator_revision) = split_pin(r.allocator.name);
    s.revision = s.allocator_revision;
    s.machine = machine.empty() ? context_text(c, "host") : machine;
    s.cpu_model = context_text(c, "cpu_model");
    s.kernel = context_text(c, "kernel");
    s.thp = context_text(c, "thp");
    s.harness_version = context_text(c, "harness_version");
    s.date = context_text(c, "date");
    s.status = status_name(r.status);
    s.role = r.role;
    s.repetition = r.repetition;
    s.values = values_of(r);
    s.trace = trace_of(r);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace mh::history
