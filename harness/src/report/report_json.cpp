// JSON report writer (see report_json.h).
#include "report/report_json.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/metrics.h"
#include "core/run_metrics.h"
#include "core/summary.h"

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
  for (const auto& c : sample_columns()) j[c.name] = unreadable.count(c.name) ? Json(nullptr) : Json(c.get(s));
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
      out += inner + Json(it.key()).dump() + ": ";
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
    for (size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + j[i].dump();
    out += "]";
  } else {
    out += j.dump();
  }
}

}  // namespace

namespace {

// A column per sampled value; a column that could not be read is null (the
// reason is in sampler.unreadable).
Json samples_json(const RunRecord& r) {
  Json samples = Json::object();
  for (const auto& c : sample_columns()) {
    if (r.sampler.unreadable.count(c.name)) {
      samples[c.name] = nullptr;
      continue;
    }
    Json col = Json::array();
    for (const auto& s : r.samples) {
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

Json marks_json(const RunRecord& r) {
  Json marks = Json::array();
  for (const auto& m : r.marks)
    marks.push_back(Json{{"t_ms", std::round(m.t_ms * 100) / 100},
                         {"name", m.name},
                         {"sample", sample_json(m.sample, r.sampler.unreadable)},
                         {"hwm_kb", m.hwm_kb ? Json(*m.hwm_kb) : Json(nullptr)},
                         {"hwm_reset", m.hwm_reset}});
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
              {"identified", a.identified}, {"served_by", a.served_by}, {"verified_by", a.verified_by}};
}

Json sampler_json(const SamplerStats& s) {
  return Json{{"interval_ms", s.interval_ms},
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
}

}  // namespace

Json run_to_json(const RunRecord& r) {
  return Json{
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
      {"protocol_errors", r.protocol_errors},
      {"curve_info", r.curve_info.is_null() ? Json::object() : r.curve_info},
  };
}

namespace {

Maybe maybe_from(const Json& j) {
  Maybe m;
  if (j.is_object() && j.contains("value") && j["value"].is_number()) m.value = j["value"].get<double>();
  else if (j.is_object()) m.reason = j.value("reason", "");
  if (!m.value && j.is_object() && j.contains("above") && j["above"].is_number()) m.above = j["above"].get<double>();
  return m;
}

Sample sample_from(const Json& s) {
  Sample out;
  for (const auto& c : sample_columns())
    c.set(out, s.contains(c.name) && s[c.name].is_number() ? s[c.name].get<double>() : 0.0);
  return out;
}

Status status_from(const std::string& s) {
  for (Status st : kAllStatuses)
    if (s == status_name(st)) return st;
  return Status::Failed;
}

AllocatorRecord allocator_from(const Json& a) {
  AllocatorRecord out;
  out.name = a.value("name", "");
  out.family = a.value("family", "");
  out.version = a.value("version", "");
  out.library = a.value("library", "");
  const Json env = a.value("env", Json::object());  // items() must not outlive it
  for (const auto& [k, v] : env.items()) out.env[k] = v.get<std::string>();
  out.verified = a.value("verified", false);
  out.identified = a.value("identified", "");
  out.served_by = a.value("served_by", "");
  out.verified_by = a.value("verified_by", "probe");
  return out;
}

ExitInfo exit_from(const Json& ex) {
  ExitInfo out;
  if (ex.contains("code") && ex["code"].is_number()) out.code = ex["code"].get<int>();
  if (ex.contains("signal") && ex["signal"].is_number()) out.signal = ex["signal"].get<int>();
  out.error = ex.value("error", "");
  return out;
}

// The columns back into a sample per row, as many as there are times.
std::vector<Sample> samples_from(const Json& s) {
  std::vector<Sample> out;
  size_t n = s.contains("t_ms") ? s["t_ms"].size() : 0;
  for (size_t i = 0; i < n; ++i) {
    Json row = Json::object();
    for (const auto& c : sample_columns())
      if (s.contains(c.name) && i < s[c.name].size()) row[c.name] = s[c.name][i];
    out.push_back(sample_from(row));
  }
  return out;
}

std::vector<Mark> marks_from(const Json& marks) {
  std::vector<Mark> out;
  for (const auto& m : marks) {
    Mark mk;
    mk.t_ms = m.value("t_ms", 0.0);
    mk.name = m.value("name", "");
    mk.sample = sample_from(m.value("sample", Json::object()));
    if (m.contains("hwm_kb") && m["hwm_kb"].is_number()) mk.hwm_kb = m["hwm_kb"].get<int64_t>();
    mk.hwm_reset = m.value("hwm_reset", false);
    out.push_back(std::move(mk));
  }
  return out;
}

// The registry's run metrics into the record's fields, the curve's, perf's and
// the workload's into theirs; the derived ones (cpu_ms) are not read.
void read_metrics(const Json& m, RunRecord& r) {
  for (const auto& spec : metric_registry())
    if (spec.set && m.contains(spec.name) && m[spec.name].is_number()) spec.set(r, m[spec.name].get<double>());
  derive_anon_peak_and_cpu(r);
  if (!r.hwm_kb.value) r.hwm_kb.reason = m.value("hwm_kb_reason", "");
  if (m.contains("curve") && m["curve"].is_object())
    for (const auto& [k, v] : m["curve"].items()) r.curve.push_back({k, maybe_from(v)});
  const Json perf = m.value("perf", Json::object()), wl = m.value("workload", Json::object());
  for (const auto& [k, v] : perf.items()) r.perf[k] = maybe_from(v);
  for (const auto& [k, v] : wl.items()) r.workload_metrics[k] = maybe_from(v);
  r.allocator_stats = m.value("allocator", Json());
}

std::vector<ThreadStat> threads_from(const Json& threads) {
  std::vector<ThreadStat> out;
  for (const auto& t : threads)
    out.push_back(ThreadStat{t.value("tid", 0), t.value("name", ""), t.value("cpu_ns", uint64_t(0)),
                             t.value("wait_ns", uint64_t(0)), t.value("vol_ctxsw", uint64_t(0)),
                             t.value("invol_ctxsw", uint64_t(0))});
  return out;
}

SamplerStats sampler_from(const Json& sp) {
  SamplerStats out;
  out.interval_ms = sp.value("interval_ms", 0.0);
  if (sp.contains("achieved_ms") && sp["achieved_ms"].is_number()) out.achieved_ms = sp["achieved_ms"].get<double>();
  out.smaps_ms = sp.value("smaps_ms", 0.0);
  out.cost_us_median = sp.value("cost_us_median", 0.0);
  out.cost_us_max = sp.value("cost_us_max", 0.0);
  out.count = sp.value("samples", int64_t(0));
  out.smaps_reads = sp.value("smaps_reads", int64_t(0));
  out.smaps_cost_us_median = sp.value("smaps_cost_us_median", 0.0);
  if (sp.contains("unreadable") && sp["unreadable"].is_object())
    for (const auto& [k, v] : sp["unreadable"].items())
      if (v.is_string()) out.unreadable[k] = v.get<std::string>();
  out.hwm_reset_error = sp.value("hwm_reset_error", "");
  out.tree = sp.value("tree", false);
  out.tree_found_by = sp.value("tree_found_by", "");
  if (sp.contains("processes_max") && sp["processes_max"].is_number_integer())
    out.processes_max = sp["processes_max"].get<int64_t>();
  return out;
}

}  // namespace

RunRecord run_from_json(const Json& j) {
  RunRecord r;
  r.workload = j.value("workload", "");
  r.params = j.value("params", Json::object());
  r.allocator = allocator_from(j.value("allocator", Json::object()));
  r.role = j.value("role", "");
  r.repetition = j.value("repetition", 0);
  r.status = status_from(j.value("status", ""));
  r.exit = exit_from(j.value("exit", Json::object()));
  r.wall_ms = j.value("wall_ms", 0.0);
  r.samples = samples_from(j.value("samples", Json::object()));
  r.marks = marks_from(j.value("marks", Json::array()));
  read_metrics(j.value("metrics", Json::object()), r);
  r.curve_info = j.value("curve_info", Json::object());
  r.threads = threads_from(j.value("threads", Json::array()));
  r.data = j.value("data", Json::object());
  r.sampler = sampler_from(j.value("sampler", Json::object()));
  r.output_tail = j.value("output_tail", "");
  r.memory_limit = j.value("memory_limit", Json());
  for (const auto& e : j.value("protocol_errors", Json::array()))
    if (e.is_string()) r.protocol_errors.push_back(e.get<std::string>());
  return r;
}

std::optional<ReportData> read_report(const std::string& path, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read " + path;
    return std::nullopt;
  }
  Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded()) {
    error = path + " is not JSON (truncated, or not a report)";
    return std::nullopt;
  }
  if (!j.is_object() || !j.contains("schema")) {
    error = path + " is not a memharness report (it has no \"schema\")";
    return std::nullopt;
  }
  if (j["schema"] != kReportSchema) {
    error = path + " is a report of schema " + j["schema"].dump() + "; this harness reads " + kReportSchema;
    return std::nullopt;
  }
  if (!j.contains("runs") || !j["runs"].is_array()) {
    error = path + " has no runs";
    return std::nullopt;
  }
  ReportData d;
  d.context = j.value("context", Json::object());
  d.manifest = j.value("metrics", Json());
  d.complete = j.value("complete", true);
  for (const auto& r : j["runs"]) d.runs.push_back(run_from_json(r));
  return d;
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

void ReportWriter::add(const RunRecord& r) {
  std::string text;
  dump_into(run_to_json(r), text, 2);
  run_texts_.push_back(std::move(text));
}

std::string ReportWriter::text(const std::vector<RunRecord>& runs, bool complete) const {
  // The same text as dump_canonical(make_report(...)), with the runs' part
  // taken from what add() serialised.
  std::string out = "{\n  \"schema\": " + Json(kReportSchema).dump() + ",\n  \"context\": ";
  dump_into(context_, out, 1);
  out += ",\n  \"complete\": ";
  out += complete ? "true" : "false";
  out += ",\n  \"metrics\": ";
  dump_into(metric_manifest(runs, declared_), out, 1);
  out += ",\n  \"runs\": ";
  if (run_texts_.empty()) {
    out += "[]";
  } else {
    out += "[\n";
    for (size_t i = 0; i < run_texts_.size(); ++i) {
      out += "    " + run_texts_[i];
      out += i + 1 < run_texts_.size() ? ",\n" : "\n";
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

std::string write_atomic(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot write " + tmp + ": " + std::strerror(errno);
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string e = "cannot write " + tmp + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return e;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) < 0 || ::close(fd) < 0) {
    ::unlink(tmp.c_str());
    return "cannot write " + tmp + ": " + std::strerror(errno);
  }
  if (::rename(tmp.c_str(), path.c_str()) < 0) {
    std::string e = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return e;
  }
  return "";
}

std::string check_writable(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path target(path);
  if (fs::is_directory(target)) return "output path " + path + " is a directory";
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create the directory " + dir.string() + " for " + path + ": " + ec.message();
  std::string probe = (dir / (".memharness-probe." + std::to_string(getpid()))).string();
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    // "No such file or directory" for a folder that exists (/proc) reads as a typo in the path.
    const std::string why = errno == EACCES || errno == EPERM ? "no permission to create files there"
                            : errno == EROFS                 ? "it is on a read-only file system"
                                                             : std::string("it takes no new files (") +
                                                                   std::strerror(errno) + ")";
    return "cannot write " + path + " in the folder " + dir.string() + ": " + why;
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

}  // namespace mh
