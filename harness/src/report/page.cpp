// The interactive page of reports (see page.h): its data from the run records,
// its HTML shell, and the page written with its libraries beside it.
#include "report/page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "core/escape.h"
#include "core/heap_sites.h"
#include "core/units.h"
#include "sys/input_file.h"
#include "sys/output_file.h"

namespace mh::page {

const char* page_script();  // page_script.cpp

namespace {

constexpr double kMbPerByte = 1e-6;
// A run's curve keeps at most this many samples (evenly spaced, the peak always
// among them), so that a long run does not make a page of megabytes.
constexpr size_t kMaxPoints = 3000;
constexpr size_t kMaxLibBytes = size_t(16) << 20;

// The samples a run's curve keeps: every one, or every stride-th and the peak.
std::vector<size_t> kept_samples(const std::vector<Sample>& samples) {
  std::vector<size_t> keep;
  const size_t stride = samples.size() / kMaxPoints + 1;
  size_t peak = 0;
  for (size_t i = 0; i < samples.size(); ++i)
    if (samples[i].rss_kb > samples[peak].rss_kb) peak = i;
  for (size_t i = 0; i < samples.size(); ++i)
    if (i % stride == 0 || i == peak || i + 1 == samples.size()) keep.push_back(i);
  return keep;
}

// One sampled column in MB, null where the sampler could not read it; null
// as a whole when it was read in no sample.
Json column_mb(const std::vector<Sample>& samples, const std::vector<size_t>& keep, const char* column,
               int64_t Sample::*field) {
  Json out = Json::array();
  bool any = false;
  for (size_t i : keep) {
    const Sample& s = samples[i];
    if (cell_missing(s, column)) {
      out.push_back(nullptr);
      continue;
    }
    any = any || s.*field != 0;
    out.push_back(double(s.*field) * kMbPerKb);
  }
  return any ? out : Json(nullptr);
}

// The live heap by call site as the flame graph reads it: each site's frames
// outermost first (the allocator's own left out), its MB and standard error.
Json sites_json(const HeapSites& h, const std::string& allocator_library) {
  Json sites = Json::array();
  for (const auto& s : h.top) {
    Json frames = Json::array();
    const auto own = program_frames(s, allocator_library);
    for (auto it = own.rbegin(); it != own.rend(); ++it) frames.push_back(frame_label(**it));
    sites.push_back(Json{{"frames", frames}, {"mb", s.bytes * kMbPerByte}, {"se", s.stderr_bytes * kMbPerByte}});
  }
  if (h.rest.bytes > 0)
    sites.push_back(Json{{"frames", Json::array({fmt::format("({} other sites)", h.rest_sites)})},
                         {"mb", h.rest.bytes * kMbPerByte},
                         {"se", h.rest.stderr_bytes * kMbPerByte}});
  return Json{{"sites", sites}, {"interval_bytes", h.interval_bytes}, {"live_mb", double(h.heap_live_bytes) * kMbPerByte}};
}

Json run_json(const RunRecord& r, size_t report) {
  const auto keep = kept_samples(r.samples);
  Json t = Json::array();
  for (size_t i : keep) t.push_back(r.samples[i].t_ms / 1000);
  Json marks = Json::array(), sites = Json::object();
  for (const auto& m : r.marks) {
    marks.push_back(Json{m.t_ms / 1000, m.name});
    if (m.heap_sites) sites[m.name] = sites_json(*m.heap_sites, r.allocator.library);
  }
  std::string peak_where;
  if (const HeapSites* h = peak_sites(r, &peak_where)) {
    Json p = sites_json(*h, r.allocator.library);
    p["where"] = peak_where;
    sites["(peak)"] = p;
  }
  return Json{{"report", report},
              {"workload", r.workload},
              {"allocator", r.allocator.name},
              {"role", r.role},
              {"repetition", r.repetition},
              {"status", status_name(r.status)},
              {"peak_mb", double(r.peak_rss_kb) * kMbPerKb},
              {"t", t},
              {"rss", column_mb(r.samples, keep, "rss_kb", &Sample::rss_kb)},
              {"anon", column_mb(r.samples, keep, "anon_kb", &Sample::anon_kb)},
              {"heap", column_mb(r.samples, keep, "heap_live_kb", &Sample::heap_live_kb)},
              {"marks", marks},
              {"sites", sites}};
}

// The run table as `harness show` draws it: per workload a header and rows,
// then the notes (legend, ledger notes, failed runs), all as plain text.
Json table_json(const PageReport& report) {
  const SummaryBlocks s = summary_blocks(report.runs, report.headlines);
  Json blocks = Json::array();
  for (const auto& b : s.blocks) blocks.push_back(Json{{"header", b.header}, {"rows", b.lines}});
  const auto plain = [](std::string_view text) { return std::string(text); };
  return Json{{"blocks", blocks}, {"notes", summary_notes(report.runs, s, "", plain)}};
}

// Each metric of a comparison with the unit its values are drawn in.
Json comparison_json(Json c) {
  if (!c.is_object() || !c.contains("workloads") || !c["workloads"].is_array()) return c;
  for (auto& w : c["workloads"]) {
    if (!w.is_object() || !w.contains("metrics") || !w["metrics"].is_array()) continue;
    for (auto& m : w["metrics"]) {
      if (!m.is_object()) continue;
      const DisplayUnit u = display_unit(m.contains("unit") && m["unit"].is_string() ? m["unit"].get<std::string>() : "");
      m["display_unit"] = u.unit;
      m["scale"] = u.scale;
    }
  }
  return c;
}

}  // namespace

const std::vector<PageLib>& page_libs() {
  static const std::vector<PageLib> libs = {
      {"chart.min.js", kDebianChartJs},
      {"hammer.min.js", "npm hammerjs"},
      {"chartjs-plugin-zoom.min.js", "npm chartjs-plugin-zoom"},
      {"d3.min.js", "npm d3 7"},
      {"d3-flamegraph.min.js", "npm d3-flame-graph 5"},
      {"d3-flamegraph.css", "npm d3-flame-graph 5"},
  };
  return libs;
}

Json page_data(const std::vector<PageReport>& reports, double diff_k, const Json& comparison) {
  Json runs = Json::array(), listed = Json::array();
  for (size_t i = 0; i < reports.size(); ++i) {
    for (const auto& r : reports[i].runs) runs.push_back(run_json(r, i));
    listed.push_back(Json{{"name", reports[i].name}, {"table", table_json(reports[i])}});
  }
  return Json{{"reports", listed},
              {"runs", runs},
              {"diff_k", diff_k},
              {"comparison", comparison.is_null() ? comparison : comparison_json(comparison)}};
}

std::string page_html(const Json& data) {
  std::ostringstream html;
  html << "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>memharness report</title>\n";
  for (const auto& lib : page_libs()) {
    const std::string file = lib.file;
    if (file.size() > 4 && file.compare(file.size() - 4, 4, ".css") == 0)
      html << "<link rel=\"stylesheet\" href=\"" << file << "\">\n";
    else
      html << "<script src=\"" << file << "\"></script>\n";
  }
  html << "<style>body{font-family:sans-serif;max-width:80em;margin:auto;padding:0 1em}"
          "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
          "td:first-child,td:nth-child(2){text-align:left}#verdict{font-weight:bold;font-size:110%}"
          ".regression{color:#b00}.controls{margin:.5em 0}.controls>*{margin-right:1em}"
          ".note{color:#555;font-size:90%}.flame{border:1px solid #ddd}</style>\n</head>\n<body>\n"
          "<h1 id=\"title\">memharness report</h1>\n<p id=\"status\">the page's script did not run</p>\n"
          "<div id=\"comparison\"></div>\n<div id=\"memory\"></div>\n<div id=\"tables\"></div>\n"
          "<div id=\"flames\"></div>\n"
          "<script type=\"application/json\" id=\"page-data\">"
       << escape::script_json(json_text(data)) << "</script>\n<script>" << page_script()
       << "</script>\n</body>\n</html>\n";
  return html.str();
}

std::string write_page(const std::string& dir, const std::string& libs_dir, const Json& data) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> files;  // path beside the page, contents
  for (const auto& lib : page_libs()) {
    const std::string from =
        std::string(lib.origin) == kDebianChartJs ? std::string(kDebianChartJs) : (fs::path(libs_dir) / lib.file).string();
    std::error_code ec;
    if (!fs::exists(from, ec))
      return fmt::format("{} is missing ({}): {}", from, lib.origin,
                         from == kDebianChartJs
                             ? std::string("apt-get install libjs-chart.js")
                             : fmt::format("./scripts/harness (its set-up) fetches the pages' libraries from npm into {}",
                                           libs_dir));
    std::string error;
    auto text = input_file::read_all(from, kMaxLibBytes, error);
    if (!text) return fmt::format("cannot copy {}: {}", from, error);
    files.emplace_back((fs::path(dir) / lib.file).string(), std::move(*text));
  }
  files.emplace_back((fs::path(dir) / "index.html").string(), page_html(data));
  for (const auto& [path, text] : files)
    if (auto e = output_file::check_target(path); !e.empty()) return e;
  for (const auto& [path, text] : files)
    if (auto e = output_file::write_atomic(path, text); !e.empty()) return e;
  return "";
}

}  // namespace mh::page
