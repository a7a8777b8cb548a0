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
  return Json{{"value", nullptr}, {"reason", m.reason}};
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

Json run_to_json(const RunRecord& r) {
  Json samples = Json::object();
  for (const auto& c : sample_columns()) {
    if (r.sampler.unreadable.count(c.name)) {
      samples[c.name] = nullptr;  // the reason is in sampler.unreadable
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
  Json marks = Json::array();
  for (const auto& m : r.marks)
    marks.push_back(Json{{"t_ms", std::round(m.t_ms * 100) / 100},
                         {"name", m.name},
                         {"sample", sample_json(m.sample, r.sampler.unreadable)},
                         {"hwm_kb", m.hwm_kb ? Json(*m.hwm_kb) : Json(nullptr)},
                         {"hwm_reset", m.hwm_reset}});

  // The registry's run metrics, then the curve's; a missing figure is null
  // with the reason, never an invented 0.
  Json metrics = Json::object();
  for (const auto& spec : metric_registry()) {
    if (!spec.get) continue;
    const auto v = spec.get(r);
    metrics[spec.name] = v ? number_json(*v) : Json(nullptr);
    if (!v)
      metrics[std::string(spec.name) + "_reason"] = r.samples.empty() ? "no sample of the process could be read"
                                                    : spec.name == std::string("hwm_kb") ? r.hwm_kb.reason
                                                                                         : "not measured";
  }
  Json curve = Json::object();
  for (const auto& [name, m] : r.curve) curve[name] = maybe_json(m);
  metrics["curve"] = curve;
  Json perf = Json::object();
  for (const auto& [name, m] : r.perf) perf[name] = maybe_json(m);
  metrics["perf"] = perf;
  Json wl = Json::object();
  for (const auto& [name, m] : r.workload_metrics) wl[name] = maybe_json(m);
  metrics["workload"] = wl;
  metrics["allocator"] = r.allocator_stats.is_null() ? Json(nullptr) : r.allocator_stats;

  Json threads = Json::array();
  for (const auto& t : r.threads)
    threads.push_back(Json{{"tid", t.tid}, {"name", t.name}, {"cpu_ns", t.cpu_ns}, {"wait_ns", t.wait_ns},
                           {"vol_ctxsw", t.vol_ctxsw}, {"invol_ctxsw", t.invol_ctxsw}});

  Json exit = Json{{"code", r.exit.code ? Json(*r.exit.code) : Json(nullptr)},
                   {"signal", r.exit.signal ? Json(*r.exit.signal) : Json(nullptr)}};
  if (!r.exit.error.empty()) exit["error"] = r.exit.error;

  return Json{
      {"workload", r.workload},
      {"params", r.params},
      {"allocator",
       {{"name", r.allocator.name},
        {"family", r.allocator.family},
        {"version", r.allocator.version},
        {"library", r.allocator.library},
        {"env", r.allocator.env},
        {"verified", r.allocator.verified},
        {"identified", r.allocator.identified},
        {"served_by", r.allocator.served_by},
        {"verified_by", r.allocator.verified_by}}},
      {"role", r.role},
      {"repetition", r.repetition},
      {"status", status_name(r.status)},
      {"exit", exit},
      {"wall_ms", std::round(r.wall_ms * 100) / 100},
      {"samples", samples},
      {"marks", marks},
      {"metrics", metrics},
      {"threads", threads},
      {"data", r.data},
      {"sampler",
       {{"interval_ms", r.sampler.interval_ms},
        {"achieved_ms", r.sampler.achieved_ms ? Json(std::round(*r.sampler.achieved_ms * 1000) / 1000) : Json()},
        {"cost_us_median", std::round(r.sampler.cost_us_median * 10) / 10},
        {"cost_us_max", std::round(r.sampler.cost_us_max * 10) / 10},
        {"samples", r.sampler.count},
        {"smaps_ms", r.sampler.smaps_ms},
        {"smaps_reads", r.sampler.smaps_reads},
        {"smaps_cost_us_median", std::round(r.sampler.smaps_cost_us_median * 10) / 10},
        {"unreadable", r.sampler.unreadable},
        {"hwm_reset_error", r.sampler.hwm_reset_error},
        {"tree", r.sampler.tree},
        {"tree_found_by", r.sampler.tree_found_by},
        {"processes_max", r.sampler.processes_max ? Json(*r.sampler.processes_max) : Json()}}},
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
  return m;
}

Sample sample_from(const Json& s) {
  Sample out;
  auto num = [&](const char* k) { return s.contains(k) && s[k].is_number() ? s[k].get<double>() : 0.0; };
  out.t_ms = num("t_ms");
  out.rss_kb = int64_t(num("rss_kb"));
  out.anon_kb = int64_t(num("anon_kb"));
  out.file_kb = int64_t(num("file_kb"));
  out.shmem_kb = int64_t(num("shmem_kb"));
  out.anon_huge_kb = int64_t(num("anon_huge_kb"));
  out.minflt = int64_t(num("minflt"));
  out.majflt = int64_t(num("majflt"));
  out.utime_ms = num("utime_ms");
  out.stime_ms = num("stime_ms");
  out.threads = int64_t(num("threads"));
  return out;
}

Status status_from(const std::string& s) {
  for (Status st : kAllStatuses)
    if (s == status_name(st)) return st;
  return Status::Failed;
}

}  // namespace

RunRecord run_from_json(const Json& j) {
  RunRecord r;
  r.workload = j.value("workload", "");
  r.params = j.value("params", Json::object());
  const Json a = j.value("allocator", Json::object());
  r.allocator.name = a.value("name", "");
  r.allocator.family = a.value("family", "");
  r.allocator.version = a.value("version", "");
  r.allocator.library = a.value("library", "");
  const Json env = a.value("env", Json::object());  // items() must not outlive it
  for (const auto& [k, v] : env.items()) r.allocator.env[k] = v.get<std::string>();
  r.allocator.verified = a.value("verified", false);
  r.allocator.identified = a.value("identified", "");
  r.allocator.served_by = a.value("served_by", "");
  r.allocator.verified_by = a.value("verified_by", "probe");
  r.role = j.value("role", "");
  r.repetition = j.value("repetition", 0);
  r.status = status_from(j.value("status", ""));
  const Json ex = j.value("exit", Json::object());
  if (ex.contains("code") && ex["code"].is_number()) r.exit.code = ex["code"].get<int>();
  if (ex.contains("signal") && ex["signal"].is_number()) r.exit.signal = ex["signal"].get<int>();
  r.exit.error = ex.value("error", "");
  r.wall_ms = j.value("wall_ms", 0.0);
  const Json s = j.value("samples", Json::object());
  size_t n = s.contains("t_ms") ? s["t_ms"].size() : 0;
  for (size_t i = 0; i < n; ++i) {
    Json row = Json::object();
    for (const auto& c : sample_columns())
      if (s.contains(c.name) && i < s[c.name].size()) row[c.name] = s[c.name][i];
    r.samples.push_back(sample_from(row));
  }
  for (const auto& m : j.value("marks", Json::array())) {
    Mark mk;
    mk.t_ms = m.value("t_ms", 0.0);
    mk.name = m.value("name", "");
    mk.sample = sample_from(m.value("sample", Json::object()));
    if (m.contains("hwm_kb") && m["hwm_kb"].is_number()) mk.hwm_kb = m["hwm_kb"].get<int64_t>();
    mk.hwm_reset = m.value("hwm_reset", false);
    r.marks.push_back(std::move(mk));
  }
  const Json m = j.value("metrics", Json::object());
  for (const auto& spec : metric_registry())
    if (spec.set && m.contains(spec.name) && m[spec.name].is_number()) spec.set(r, m[spec.name].get<double>());
  derive_anon_peak_and_cpu(r);
  if (!r.hwm_kb.value) r.hwm_kb.reason = m.value("hwm_kb_reason", "");
  if (m.contains("curve") && m["curve"].is_object())
    for (const auto& [k, v] : m["curve"].items()) r.curve.push_back({k, maybe_from(v)});
  r.curve_info = j.value("curve_info", Json::object());
  const Json perf = m.value("perf", Json::object()), wl = m.value("workload", Json::object());
  for (const auto& [k, v] : perf.items()) r.perf[k] = maybe_from(v);
  for (const auto& [k, v] : wl.items()) r.workload_metrics[k] = maybe_from(v);
  r.allocator_stats = m.value("allocator", Json());
  for (const auto& t : j.value("threads", Json::array()))
    r.threads.push_back(ThreadStat{t.value("tid", 0), t.value("name", ""), t.value("cpu_ns", uint64_t(0)),
                                   t.value("wait_ns", uint64_t(0)), t.value("vol_ctxsw", uint64_t(0)),
                                   t.value("invol_ctxsw", uint64_t(0))});
  r.data = j.value("data", Json::object());
  const Json sp = j.value("sampler", Json::object());
  r.sampler.interval_ms = sp.value("interval_ms", 0.0);
  if (sp.contains("achieved_ms") && sp["achieved_ms"].is_number()) r.sampler.achieved_ms = sp["achieved_ms"].get<double>();
  r.sampler.smaps_ms = sp.value("smaps_ms", 0.0);
  r.sampler.cost_us_median = sp.value("cost_us_median", 0.0);
  r.sampler.cost_us_max = sp.value("cost_us_max", 0.0);
  r.sampler.count = sp.value("samples", int64_t(0));
  r.sampler.smaps_reads = sp.value("smaps_reads", int64_t(0));
  r.sampler.smaps_cost_us_median = sp.value("smaps_cost_us_median", 0.0);
  if (sp.contains("unreadable") && sp["unreadable"].is_object())
    for (const auto& [k, v] : sp["unreadable"].items())
      if (v.is_string()) r.sampler.unreadable[k] = v.get<std::string>();
  r.sampler.hwm_reset_error = sp.value("hwm_reset_error", "");
  r.sampler.tree = sp.value("tree", false);
  r.sampler.tree_found_by = sp.value("tree_found_by", "");
  if (sp.contains("processes_max") && sp["processes_max"].is_number_integer())
    r.sampler.processes_max = sp["processes_max"].get<int64_t>();
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
