// The JSON report: writing it, and reading it back through the checking reader (see report_json.h).
#include "report/report_json.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>

#include "core/metrics.h"
#include "core/derived_metrics.h"
#include "core/ledger_notes.h"
#include "core/summary.h"
#include "sys/json_read.h"

namespace mh {

namespace {

Json maybe_json(const Maybe& m) {
  if (m.value) return Json{{"value", *m.value}};
  Json j{{"value", nullptr}, {"reason", m.reason}};
  if (m.above) j["above"] = *m.above;
  return j;
}

Json sample_json(const Sample& s, const std::map<std::string, std::string>& unreadable) {
  Json j = Json::object();
  for (const auto& c : sample_columns())
    j[c.name] = unreadable.count(c.name) || cell_missing(s, c.name) ? Json(nullptr) : Json(c.get(s));
  return j;
}

// An integral value as an integer (counts, kB), the rest as is.
Json number_json(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e15) return Json(static_cast<int64_t>(v));
  return Json(v);
}

Json stat_json(const stats::Summary& s) {
  return Json{{"median", s.median}, {"min", s.min}, {"max", s.max}, {"n", s.n}};
}

bool is_scalar_array(const Json& j) {
  if (!j.is_array()) return false;
  for (const auto& e : j)
    if (e.is_structured()) return false;
  return true;
}

void dump_into(const Json& j, std::string& out, int indent) {
  const std::string pad(static_cast<size_t>(indent) * 2, ' ');
  const std::string inner(static_cast<size_t>(indent + 1) * 2, ' ');
  if (j.is_object() && !j.empty()) {
    out += "{\n";
    size_t i = 0;
    for (auto it = j.begin(); it != j.end(); ++it, ++i) {
      out += inner + json_text(Json(it.key())) + ": ";
      dump_into(it.value(), out, indent + 1);
      out += i + 1 < j.size() ? ",\n" : "\n";
    }
    out += pad + "}";
  } else if (j.is_array() && !j.empty() && !is_scalar_array(j)) {
    out += "[\n";
    for (size_t i = 0; i < j.size(); ++i) {
      out += inner;
      dump_into(j[i], out, indent + 1);
      out += i + 1 < j.size() ? ",\n" : "\n";
    }
    out += pad + "]";
  } else if (j.is_array()) {
    out += "[";
    for (size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + json_text(j[i]);
    out += "]";
  } else {
    out += json_text(j);
  }
}

}  // namespace

namespace {

// A column per sampled value; a column that could not be read is null (the
// reason is in sampler.unreadable), and so is a cell a sample could not give
// (sampler.null_cells).
Json samples_json(const RunRecord& r) {
  Json samples = Json::object();
  const auto& cols = sample_columns();
  for (size_t i = 0; i < cols.size(); ++i) {
    const SampleColumn& c = cols[i];
    if (r.sampler.unreadable.count(c.name)) {
      samples[c.name] = nullptr;
      continue;
    }
    Json col = Json::array();
    for (const auto& s : r.samples) {
      if (cell_missing(s, c.name)) {
        col.push_back(nullptr);  // why: sampler.null_cells
        continue;
      }
      double v = c.get(s);
      // Times keep 0.01 ms; the rest are integers.
      if (std::string(c.name) == "t_ms") col.push_back(std::round(v * 100) / 100);
      else if (v == std::floor(v)) col.push_back(static_cast<int64_t>(v));
      else col.push_back(v);
    }
    samples[c.name] = std::move(col);
  }
  return samples;
}

// The object and the offset in it, then what symbolisation found (absent
// when it was not done): never a bare address as a name.
Json frame_json(const HeapFrame& f) {
  Json j{{"object", f.object}, {"offset", fmt::format("{:#x}", f.offset)}};
  if (f.source.empty()) return j;
  j["function"] = f.function.empty() ? Json(nullptr) : Json(f.function);
  j["file"] = f.file.empty() ? Json(nullptr) : Json(f.file);
  j["line"] = f.line > 0 ? Json(f.line) : Json(nullptr);
  j["source"] = f.source;
  if (!f.reason.empty()) j["reason"] = f.reason;
  return j;
}

Json site_json(const HeapSite& s) {
  Json j{{"bytes", std::round(s.bytes)}, {"stderr_bytes", std::round(s.stderr_bytes)}, {"samples", s.samples}};
  if (s.frames.empty()) return j;
  Json frames = Json::array();
  for (const auto& f : s.frames) frames.push_back(frame_json(f));
  j["frames"] = std::move(frames);
  return j;
}

Json heap_sites_json(const HeapSites& h) {
  Json top = Json::array();
  for (const auto& s : h.top) top.push_back(site_json(s));
  Json rest = site_json(h.rest);
  rest["sites"] = h.rest_sites;
  return Json{{"interval_bytes", h.interval_bytes}, {"top", std::move(top)}, {"rest", std::move(rest)},
              {"dropped", h.dropped}};
}

// The ledger's peak snapshot: a mark's shape, with the live heap it was taken at.
Json heap_sites_peak_json(const HeapSites& h) {
  Json j = heap_sites_json(h);
  j["heap_live_bytes"] = h.heap_live_bytes;
  j["snapshots"] = h.snapshots;
  return j;
}

Json heap_objects_json(const std::map<std::string, HeapObject>& objects) {
  Json j = Json::object();
  for (const auto& [path, o] : objects) {
    j[path] = Json{{"build_id", o.build_id ? Json(*o.build_id) : Json(nullptr)}};
    if (!o.reason.empty()) j[path]["reason"] = o.reason;
  }
  return j;
}

Json marks_json(const RunRecord& r) {
  Json marks = Json::array();
  for (const auto& m : r.marks) {
    marks.push_back(Json{{"t_ms", std::round(m.t_ms * 100) / 100},
                         {"name", m.name},
                         {"sample", sample_json(m.sample, r.sampler.unreadable)},
                         {"hwm_kb", m.hwm_kb ? Json(*m.hwm_kb) : Json(nullptr)},
                         {"hwm_reset", m.hwm_reset}});
    if (m.heap_sites) marks.back()["heap_sites"] = heap_sites_json(*m.heap_sites);
    if (m.not_malloc)
      marks.back()["not_malloc_kb"] = Json{{"stacks", m.not_malloc->stacks_kb}, {"named", m.not_malloc->named_kb}};
  }
  return marks;
}

// The registry's run metrics, then the curve's, perf's and the workload's,
// each in an object of its own; a missing figure is null with the reason,
// never an invented 0.
Json metrics_json(const RunRecord& r) {
  Json metrics = Json::object(), curve = Json::object(), perf = Json::object(), workload = Json::object();
  for (const auto& m : run_metrics(r)) {
    switch (m.source) {
      case MetricSource::Registry:
        metrics[m.name] = m.value.value ? number_json(*m.value.value) : Json(nullptr);
        if (!m.value.value) metrics[m.name + "_reason"] = m.value.reason;
        break;
      case MetricSource::Curve: curve[m.key] = maybe_json(m.value); break;
      case MetricSource::Perf: perf[m.key] = maybe_json(m.value); break;
      case MetricSource::Workload: workload[m.key] = maybe_json(m.value); break;
    }
  }
  metrics["curve"] = curve;
  metrics["perf"] = perf;
  metrics["workload"] = workload;
  metrics["allocator"] = r.allocator_stats.is_null() ? Json(nullptr) : r.allocator_stats;
  return metrics;
}

Json threads_json(const RunRecord& r) {
  Json threads = Json::array();
  for (const auto& t : r.threads)
    threads.push_back(Json{{"tid", t.tid}, {"name", t.name}, {"cpu_ns", t.cpu_ns}, {"wait_ns", t.wait_ns},
                           {"vol_ctxsw", t.vol_ctxsw}, {"invol_ctxsw", t.invol_ctxsw}});
  return threads;
}

Json exit_json(const ExitInfo& e) {
  Json exit = Json{{"code", e.code ? Json(*e.code) : Json(nullptr)}, {"signal", e.signal ? Json(*e.signal) : Json(nullptr)}};
  if (!e.error.empty()) exit["error"] = e.error;
  return exit;
}

Json allocator_json(const AllocatorRecord& a) {
  return Json{{"name", a.name},           {"family", a.family},         {"version", a.version},
              {"library", a.library},     {"env", a.env},               {"verified", a.verified},
              {"identified", a.identified}, {"served_by", a.served_by}, {"verified_by", a.verified_by},
              {"other_heaps", a.other_heaps}};
}

Json sampler_json(const SamplerStats& s) {
  Json j{{"interval_ms", s.interval_ms},
         {"achieved_ms", s.achieved_ms ? Json(std::round(*s.achieved_ms * 1000) / 1000) : Json()},
         {"cost_us_median", std::round(s.cost_us_median * 10) / 10},
         {"cost_us_max", std::round(s.cost_us_max * 10) / 10},
         {"samples", s.count},
         {"smaps_ms", s.smaps_ms},
         {"smaps_reads", s.smaps_reads},
         {"smaps_cost_us_median", std::round(s.smaps_cost_us_median * 10) / 10},
         {"unreadable", s.unreadable},
         {"hwm_reset_error", s.hwm_reset_error},
         {"tree", s.tree},
         {"tree_found_by", s.tree_found_by},
         {"processes_max", s.processes_max ? Json(*s.processes_max) : Json()}};
  // Only where some cell is null, so that reports without any read the same as before it existed.
  if (!s.null_cells.empty()) j["null_cells"] = s.null_cells;
  // Only for a bounded series (--soak), so that other reports read as before.
  if (s.series_bound)
    j["series"] = Json{{"bound", s.series_bound},
                       {"halvings", s.series_halvings},
                       {"effective_interval_ms", s.interval_ms * double(uint64_t{1} << s.series_halvings)}};
  return j;
}

Json soak_json(const SoakRecord& s) {
  return Json{{"duration_s", s.duration_s},     {"ran_s", std::round(s.ran_s * 1000) / 1000},
              {"repetitions", s.repetitions},   {"loops", s.loops},
              {"complete", s.complete},         {"incomplete_why", s.incomplete_why}};
}

Json leftovers_json(const std::vector<LeftoverProcess>& list) {
  Json out = Json::array();
  for (const auto& p : list)
    out.push_back(Json{{"pid", p.pid}, {"comm", p.comm}, {"cmdline", p.cmdline}, {"from", p.from}});
  return out;
}

}  // namespace

Json run_to_json(const RunRecord& r) {
  Json j{
      {"workload", r.workload},
      {"params", r.params},
      {"allocator", allocator_json(r.allocator)},
      {"role", r.role},
      {"repetition", r.repetition},
      {"status", status_name(r.status)},
      {"exit", exit_json(r.exit)},
      {"wall_ms", std::round(r.wall_ms * 100) / 100},
      {"samples", samples_json(r)},
      {"marks", marks_json(r)},
      {"metrics", metrics_json(r)},
      {"threads", threads_json(r)},
      {"data", r.data},
      {"sampler", sampler_json(r.sampler)},
      {"output_tail", r.output_tail},
      {"memory_limit", r.memory_limit},
      {"memory_group", r.memory_group_info.is_null() ? Json::object() : r.memory_group_info},
      {"protocol_errors", r.protocol_errors},
      {"leftover_processes", leftovers_json(r.leftover_processes)},
      {"curve_info", r.curve_info.is_null() ? Json::object() : r.curve_info},
  };
  // Where the peak came from; absent in reports written before it was kept.
  if (!r.peak_from.empty()) j["peak_from"] = r.peak_from;
  // Only where computed, so that a report read back and written again is unchanged.
  if (r.growth.is_object()) j["growth"] = r.growth;
  if (r.heap_sites_peak) j["heap_sites_peak"] = heap_sites_peak_json(*r.heap_sites_peak);
  if (r.harness_rss_at_fork_kb) j["harness_rss_at_fork_kb"] = *r.harness_rss_at_fork_kb;
  if (!r.heap_objects.empty()) j["heap_objects"] = heap_objects_json(r.heap_objects);
  if (r.soak) j["soak"] = soak_json(*r.soak);
  // Only when something was dropped, so that a run that kept everything reads as before.
  for (const auto& [what, d] : r.dropped) j["dropped"][what] = Json{{"count", d.count}, {"why", d.why}};
  return j;
}

namespace {

// Bounds of the figures a report holds, checked before any conversion: a time
// up to about 30 years in ms, memory up to kMaxKb, counts up to kMaxCount,
// anything else finite.
constexpr double kMaxMs = 1e12;
constexpr double kMaxFinite = std::numeric_limits<double>::max();
// A repetition is a round of the plan, counted from 1.
constexpr int64_t kMaxRepetition = 1000000;
constexpr int kMaxInt = std::numeric_limits<int>::max();

// What a figure in its unit (as the registry and the sampled columns name it) may be.
struct FigureRange {
  double min, max;
  bool integer;
};
FigureRange figure_range(std::string_view unit) {
  if (unit == "KiB") return {0, static_cast<double>(kMaxKb), true};
  if (unit == "ms") return {0, kMaxMs, false};
  if (unit == "faults" || unit == "switches" || unit == "count") return {0, static_cast<double>(kMaxCount), true};
  return {-kMaxFinite, kMaxFinite, false};
}

double figure(const JsonIn& v, std::string_view unit) {
  const FigureRange r = figure_range(unit);
  if (r.integer) return static_cast<double>(v.integer(static_cast<int64_t>(r.min), static_cast<int64_t>(r.max)));
  return v.number(r.min, r.max);
}

Maybe maybe_from(const JsonIn& j) {
  Maybe m;
  m.value = j.number_or_null("value", -kMaxFinite, kMaxFinite);
  if (!m.value) m.reason = j.string_or("reason", "");
  // "above": more than this (a time that never came within the run).
  if (!m.value) m.above = j.number_or_null("above", 0, kMaxMs);
  return m;
}

// One cell of a sampled column; an absent or null one stays null.
void set_cell(Sample& s, size_t column, const std::optional<JsonIn>& cell) {
  const SampleColumn& c = sample_columns()[column];
  if (!cell || cell->is_null()) s.missing |= 1u << column;
  else c.set(s, figure(*cell, c.unit));
}

Sample sample_from(const JsonIn& s) {
  Sample out;
  s.object();
  for (size_t i = 0; i < sample_columns().size(); ++i) set_cell(out, i, s.find(sample_columns()[i].name));
  return out;
}

Status status_from(const JsonIn& j) {
  const std::string s = j.string();
  std::string names;
  for (Status st : kAllStatuses) {
    if (s == status_name(st)) return st;
    names += (names.empty() ? "" : ", ") + std::string(status_name(st));
  }
  j.fail("one of " + names);
}

AllocatorRecord allocator_from(const JsonIn& a) {
  AllocatorRecord out;
  out.name = a.string_or("name", "");
  out.family = a.string_or("family", "");
  out.version = a.string_or("version", "");
  out.library = a.string_or("library", "");
  if (auto env = a.find("env")) env->each_member([&](const std::string& k, const JsonIn& v) { out.env[k] = v.string(); });
  out.verified = a.boolean_or("verified", false);
  out.identified = a.string_or("identified", "");
  out.served_by = a.string_or("served_by", "");
  out.verified_by = a.string_or("verified_by", "probe");
  if (auto heaps = a.find("other_heaps"))
    heaps->each_element([&](const JsonIn& h) { out.other_heaps.push_back(h.string()); });
  return out;
}

ExitInfo exit_from(const JsonIn& ex) {
  ExitInfo out;
  if (auto code = ex.integer_or_null("code", -kMaxInt, kMaxInt)) out.code = static_cast<int>(*code);
  if (auto sig = ex.integer_or_null("signal", 1, kMaxInt)) out.signal = static_cast<int>(*sig);
  out.error = ex.string_or("error", "");
  return out;
}

// The columns back into a sample per row, as many as there are times. A
// column that is null as a whole could not be read: unreadable says why.
std::vector<Sample> samples_from(const JsonIn& s, SamplerStats& sampler) {
  const size_t n = s.at("t_ms").size();
  std::vector<Sample> out(n);
  for (size_t i = 0; i < sample_columns().size(); ++i) {
    const char* name = sample_columns()[i].name;
    auto col = s.find(name);
    if (!col || col->is_null()) {
      // Absent: the report was written before the column existed.
      sampler.unreadable.emplace(name, col ? "null in the report read back" : "not in the report read back");
      for (auto& row : out) row.missing |= 1u << i;
      continue;
    }
    if (col->size() != n) col->fail(fmt::format("an array of {} values (as many as t_ms)", n));
    for (size_t row = 0; row < n; ++row) set_cell(out[row], i, (*col)[row]);
  }
  return out;
}

// A string that may be null (not known): "" then.
std::string text_or_null(const JsonIn& j, const char* key) {
  auto m = j.find(key);
  return m && !m->is_null() ? m->string() : "";
}

HeapFrame frame_from(const JsonIn& f) {
  HeapFrame out;
  out.object = f.string_or("object", "");
  out.offset = std::strtoull(f.string_or("offset", "0").c_str(), nullptr, 16);
  out.function = text_or_null(f, "function");
  out.file = text_or_null(f, "file");
  out.line = static_cast<int>(f.integer_or_null("line", 1, kMaxInt).value_or(0));
  out.source = f.string_or("source", "");
  out.reason = f.string_or("reason", "");
  return out;
}

HeapSite site_from(const JsonIn& j) {
  HeapSite s;
  s.bytes = j.number_or("bytes", 0, 0, kMaxHeapBytes);
  s.stderr_bytes = j.number_or("stderr_bytes", 0, 0, kMaxHeapBytes);
  s.samples = j.integer_or("samples", 0, 0, INT64_MAX);
  if (auto frames = j.find("frames")) frames->each_element([&](const JsonIn& f) { s.frames.push_back(frame_from(f)); });
  return s;
}

HeapSites heap_sites_from(const JsonIn& j) {
  HeapSites h;
  h.interval_bytes = uint64_t(j.integer_or("interval_bytes", 0, 0, INT64_MAX));
  h.dropped = uint64_t(j.integer_or("dropped", 0, 0, INT64_MAX));
  if (auto top = j.find("top")) top->each_element([&](const JsonIn& s) { h.top.push_back(site_from(s)); });
  if (auto rest = j.find("rest")) {
    h.rest = site_from(*rest);
    h.rest_sites = rest->integer_or("sites", 0, 0, INT64_MAX);
  }
  return h;
}

HeapSites heap_sites_peak_from(const JsonIn& j) {
  HeapSites h = heap_sites_from(j);
  h.heap_live_bytes = j.integer_or("heap_live_bytes", 0, -INT64_MAX, INT64_MAX);
  h.snapshots = uint64_t(j.integer_or("snapshots", 0, 0, INT64_MAX));
  return h;
}

std::vector<Mark> marks_from(const JsonIn& marks) {
  std::vector<Mark> out;
  marks.each_element([&](const JsonIn& m) {
    Mark mk;
    mk.t_ms = m.number_or("t_ms", 0, 0, kMaxMs);
    mk.name = m.string_or("name", "");
    if (auto s = m.find("sample")) mk.sample = sample_from(*s);
    mk.hwm_kb = m.integer_or_null("hwm_kb", 0, kMaxKb);
    mk.hwm_reset = m.boolean_or("hwm_reset", false);
    if (auto h = m.find("heap_sites")) mk.heap_sites = heap_sites_from(*h);
    if (auto n = m.find("not_malloc_kb"))
      mk.not_malloc = NotMalloc{n->integer_or("stacks", 0, 0, kMaxKb), n->integer_or("named", 0, 0, kMaxKb)};
    out.push_back(std::move(mk));
  });
  return out;
}

void maybes_from(const JsonIn& m, const char* key, const std::function<void(const std::string&, Maybe)>& put) {
  if (auto o = m.find(key)) o->each_member([&](const std::string& k, const JsonIn& v) { put(k, maybe_from(v)); });
}

// The registry's run metrics into the record's fields, the curve's, perf's and
// the workload's into theirs; the derived ones (cpu_ms) are not read. A null
// stays unset, with the reason it was written with.
void read_metrics(const JsonIn& m, RunRecord& r) {
  for (const auto& spec : metric_registry()) {
    if (auto v = spec.set ? m.find(spec.name) : std::nullopt; v && !v->is_null()) spec.set(r, figure(*v, spec.unit));
    const std::string reason = std::string(spec.name) + "_reason";
    if (auto v = spec.get ? m.find(spec.name) : std::nullopt; v && v->is_null() && m.has(reason))
      r.unmeasured[spec.name] = m.string_or(reason, "");
  }
  derive_anon_peak_and_cpu(r);
  if (!r.hwm_kb.value) r.hwm_kb.reason = m.string_or("hwm_kb_reason", "");
  maybes_from(m, "curve", [&](const std::string& k, Maybe v) { r.curve.emplace_back(k, std::move(v)); });
  maybes_from(m, "perf", [&](const std::string& k, Maybe v) { r.perf[k] = std::move(v); });
  maybes_from(m, "workload", [&](const std::string& k, Maybe v) { r.workload_metrics[k] = std::move(v); });
  if (auto a = m.find("allocator")) r.allocator_stats = a->json();
}

std::vector<ThreadStat> threads_from(const JsonIn& threads) {
  std::vector<ThreadStat> out;
  threads.each_element([&](const JsonIn& t) {
    auto count = [&](const char* key) { return static_cast<uint64_t>(t.integer_or(key, 0, 0, kMaxCount)); };
    out.push_back(ThreadStat{static_cast<int>(t.integer_or("tid", 0, 0, kMaxInt)), t.string_or("name", ""),
                             count("cpu_ns"), count("wait_ns"), count("vol_ctxsw"), count("invol_ctxsw")});
  });
  return out;
}

SamplerStats sampler_from(const JsonIn& sp) {
  SamplerStats out;
  out.interval_ms = sp.number_or("interval_ms", 0, 0, kMaxMs);
  out.achieved_ms = sp.number_or_null("achieved_ms", 0, kMaxMs);
  out.smaps_ms = sp.number_or("smaps_ms", 0, 0, kMaxMs);
  out.cost_us_median = sp.number_or("cost_us_median", 0, 0, kMaxFinite);
  out.cost_us_max = sp.number_or("cost_us_max", 0, 0, kMaxFinite);
  out.count = sp.integer_or("samples", 0, 0, kMaxCount);
  out.smaps_reads = sp.integer_or("smaps_reads", 0, 0, kMaxCount);
  out.smaps_cost_us_median = sp.number_or("smaps_cost_us_median", 0, 0, kMaxFinite);
  for (auto [key, into] : {std::pair{"unreadable", &out.unreadable}, std::pair{"null_cells", &out.null_cells}})
    if (auto u = sp.find(key))
      u->each_member([into = into](const std::string& k, const JsonIn& v) { (*into)[k] = v.string(); });
  out.hwm_reset_error = sp.string_or("hwm_reset_error", "");
  out.tree = sp.boolean_or("tree", false);
  out.tree_found_by = sp.string_or("tree_found_by", "");
  out.processes_max = sp.integer_or_null("processes_max", 0, kMaxCount);
  if (auto series = sp.find("series")) {
    out.series_bound = static_cast<uint64_t>(series->integer_or("bound", 0, 0, kMaxCount));
    out.series_halvings = static_cast<int>(series->integer_or("halvings", 0, 0, 62));
  }
  return out;
}

SoakRecord soak_from(const JsonIn& j) {
  SoakRecord s;
  s.duration_s = j.number_or("duration_s", 0, 0, kMaxMs);
  s.ran_s = j.number_or("ran_s", 0, 0, kMaxMs);
  s.repetitions = j.integer_or("repetitions", 0, 0, kMaxCount);
  s.loops = j.integer_or("loops", 0, 0, kMaxCount);
  s.complete = j.boolean_or("complete", false);
  s.incomplete_why = j.string_or("incomplete_why", "");
  return s;
}

std::vector<LeftoverProcess> leftovers_from(const JsonIn& list) {
  std::vector<LeftoverProcess> out;
  list.each_element([&](const JsonIn& p) {
    LeftoverProcess l;
    l.pid = static_cast<int>(p.at("pid").integer(1, kMaxInt));
    l.comm = p.string_or("comm", "");
    l.cmdline = p.string_or("cmdline", "");
    l.from = p.string_or("from", "");
    out.push_back(std::move(l));
  });
  return out;
}

// A member that is a JSON value of its own (kept whole): present, it must be an object.
Json object_or(const JsonIn& j, const char* key, Json def) {
  auto m = j.find(key);
  return m ? m->object() : def;
}

}  // namespace

bool samples_from_cells(const SampleCells& cells, RunRecord& r) {
  const auto t = cells.find("t_ms");
  if (t == cells.end()) return false;
  const size_t n = t->second.size();
  r.samples.assign(n, Sample{});
  for (size_t i = 0; i < sample_columns().size(); ++i) {
    const SampleColumn& c = sample_columns()[i];
    if (r.sampler.unreadable.count(c.name)) continue;  // null as a whole: samples_from said why
    const auto col = cells.find(c.name);
    if (col != cells.end() && col->second.size() != n) return false;
    const FigureRange range = figure_range(c.unit);
    for (size_t row = 0; row < n; ++row) {
      const std::optional<double> v = col == cells.end() ? std::nullopt : col->second[row];
      if (!v) {
        r.samples[row].missing |= 1u << i;
        continue;
      }
      if (!(*v >= range.min && *v <= range.max) || (range.integer && *v != std::floor(*v))) return false;
      c.set(r.samples[row], *v);
    }
  }
  derive_anon_peak_and_cpu(r);
  return true;
}

RunRecord run_from_json(const JsonIn& j) {
  RunRecord r;
  r.workload = j.string_or("workload", "");
  r.params = object_or(j, "params", Json::object());
  if (auto a = j.find("allocator")) r.allocator = allocator_from(*a);
  r.role = j.string_or("role", "");
  r.repetition = static_cast<int>(j.integer_or("repetition", 1, 1, kMaxRepetition));
  if (auto s = j.find("status")) r.status = status_from(*s);
  if (auto e = j.find("exit")) r.exit = exit_from(*e);
  r.wall_ms = j.number_or("wall_ms", 0, 0, kMaxMs);
  if (auto sp = j.find("sampler")) r.sampler = sampler_from(*sp);
  if (auto s = j.find("samples")) r.samples = samples_from(*s, r.sampler);
  if (auto m = j.find("marks")) r.marks = marks_from(*m);
  if (auto h = j.find("heap_sites_peak")) r.heap_sites_peak = heap_sites_peak_from(*h);
  if (auto m = j.find("metrics")) read_metrics(*m, r);
  r.curve_info = object_or(j, "curve_info", Json::object());
  if (j.find("growth")) r.growth = object_or(j, "growth", Json::object());
  r.peak_from = j.string_or("peak_from", "");
  r.harness_rss_at_fork_kb = j.integer_or_null("harness_rss_at_fork_kb", 0, kMaxKb);
  if (auto t = j.find("threads")) r.threads = threads_from(*t);
  r.data = object_or(j, "data", Json::object());
  r.output_tail = j.string_or("output_tail", "");
  if (auto m = j.find("memory_limit")) r.memory_limit = m->json();
  r.memory_group_info = object_or(j, "memory_group", Json::object());
  if (auto p = j.find("protocol_errors")) p->each_element([&](const JsonIn& e) { r.protocol_errors.push_back(e.string()); });
  if (auto l = j.find("leftover_processes")) r.leftover_processes = leftovers_from(*l);
  if (auto sk = j.find("soak")) r.soak = soak_from(*sk);
  if (auto h = j.find("heap_objects"))
    h->each_member([&](const std::string& path, const JsonIn& o) {
      const std::string id = text_or_null(o, "build_id");
      r.heap_objects[path] = HeapObject{id.empty() ? std::nullopt : std::optional(id), o.string_or("reason", "")};
    });
  if (auto d = j.find("dropped"))
    d->each_member([&](const std::string& what, const JsonIn& o) {
      r.dropped[what] = Dropped{o.at("count").integer(0, kMaxCount), o.string_or("why", "")};
    });
  return r;
}

namespace {

// The manifest's entries that a reader of the report uses (declared_from_manifest).
void check_manifest(const JsonIn& manifest) {
  manifest.each_member([](const std::string&, const JsonIn& entry) {
    for (const char* key : {"unit", "about", "title", "scope"}) entry.string_or(key, "");
    if (auto b = entry.find("better"); b && b->string() != "lower" && b->string() != "higher" && b->string() != "none")
      b->fail("one of lower, higher, none");
  });
}

// The parts of the context's plan that merge, compare and --resume read.
void check_context(const JsonIn& context) {
  auto plan = context.find("plan");
  if (!plan || plan->is_null()) return;
  plan->string_or("suite", "");
  if (auto seed = plan->find("shuffle_seed"); seed && !seed->json().is_number_unsigned()) seed->fail("an unsigned integer");
}

}  // namespace

ReportData report_head_from(const JsonIn& j, const char* expected_schema) {
  if (!j.has("schema")) j.fail_because("not a memharness report (it has no \"schema\")");
  const std::string schema = j.at("schema").string();
  if (schema != expected_schema)
    j.fail_because("a report of schema " + json_text(Json(schema)) + "; this harness reads " + expected_schema);
  ReportData d;
  d.context = object_or(j, "context", Json::object());
  if (auto c = j.find("context")) check_context(*c);
  if (auto m = j.find("metrics"); m && !m->is_null()) {
    check_manifest(*m);
    d.manifest = m->json();
  }
  d.complete = j.boolean_or("complete", true);
  return d;
}

namespace {

ReportData report_from(const JsonIn& j) {
  ReportData d = report_head_from(j);
  const JsonIn runs = j.at("runs");
  runs.each_element([&](const JsonIn& r) {
    r.object();
    d.runs.push_back(run_from_json(r));
  });
  return d;
}

}  // namespace

std::optional<ReportData> report_from_text(std::string_view text, const std::string& name, std::string& error) {
  auto j = parse_json(text, name, kFileLimits, error);
  if (!j) return std::nullopt;
  return read_checked<ReportData>([&] { return report_from(JsonIn(*j, name)); }, error);
}

std::optional<ReportData> read_report_document(const std::string& path, std::string& error) {
  auto j = read_json_file(path, kFileLimits, error);
  if (!j) return std::nullopt;
  return read_checked<ReportData>([&] { return report_from(JsonIn(*j, path)); }, error);
}

namespace {

Json summary_json(const std::vector<RunRecord>& runs) {
  Json summary = Json::array();
  for (const auto& row : summarize_runs(runs)) {
    Json metrics = Json::object();
    for (const auto& [name, s] : row.metrics) metrics[name] = stat_json(s);
    summary.push_back(Json{{"workload", row.workload},
                           {"allocator", row.allocator},
                           {"role", row.role},
                           {"runs_ok", row.runs_ok},
                           {"runs_total", row.runs_total},
                           {"metrics", metrics}});
    // Only where there are some: the ledger's figures need a word (ledger_notes.h).
    const auto run = std::find_if(runs.begin(), runs.end(), [&](const RunRecord& r) {
      return r.workload == row.workload && r.allocator.name == row.allocator && r.role == row.role;
    });
    Json notes = Json::array();
    for (const auto& n : ledger_notes(row, *run))
      notes.push_back(Json{{"code", n.code}, {"text", n.figures + ": " + n.why}, {"live_kb", n.live_kb}, {"anon_kb", n.anon_kb}});
    if (!notes.empty()) summary.back()["notes"] = notes;
  }
  return summary;
}

}  // namespace

Json make_report(const Json& context, const std::vector<RunRecord>& runs, bool complete,
                 const DeclaredMetrics& declared) {
  Json jruns = Json::array();
  for (const auto& r : runs) jruns.push_back(run_to_json(r));
  return Json{{"schema", kReportSchema},
              {"context", context},
              {"complete", complete},
              {"metrics", metric_manifest(runs, declared)},
              {"runs", jruns},
              {"summary", summary_json(runs)}};
}

std::string report_text(const Json& context, const std::vector<RunRecord>& runs, bool complete,
                        const DeclaredMetrics& declared) {
  std::string out = "{\n  \"schema\": " + json_text(Json(kReportSchema)) + ",\n  \"context\": ";
  dump_into(context, out, 1);
  out += ",\n  \"complete\": ";
  out += complete ? "true" : "false";
  out += ",\n  \"metrics\": ";
  dump_into(metric_manifest(runs, declared), out, 1);
  out += ",\n  \"runs\": ";
  if (runs.empty()) {
    out += "[]";
  } else {
    out += "[\n";
    for (size_t i = 0; i < runs.size(); ++i) {
      out += "    ";
      dump_into(run_to_json(runs[i]), out, 2);
      out += i + 1 < runs.size() ? ",\n" : "\n";
    }
    out += "  ]";
  }
  out += ",\n  \"summary\": ";
  dump_into(summary_json(runs), out, 1);
  return out + "\n}\n";
}

std::string dump_canonical(const Json& j) {
  std::string out;
  dump_into(j, out, 0);
  return out + "\n";
}

}  // namespace mh
