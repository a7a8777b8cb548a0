// The table command: the allocator matrix (report/matrix.h) of any reports:
// shards and sittings combine, the runs of one workload under one allocator
// pooled into one cell when the reports ran it with the same parameters, and
// refused (exit 2, naming both reports) when they did not.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "commands/commands.h"
#include "commands/resolve.h"
#include "report/matrix.h"
#include "report/report_read.h"

namespace mh {

namespace {

constexpr const char* kWhoTable = "harness table";

std::string params_text(const Json& params) { return params.empty() ? "no parameters" : json_text(params); }

// What the reports give the matrix: every run, role dropped (a column is an
// allocator), the headline figures and declared metrics of all.
struct Pooled {
  std::vector<RunRecord> runs;
  HeadlinesByWorkload headlines;
  DeclaredMetrics declared;
  std::set<std::string> hosts;
};

// "" when `report` joins `into`, else why not: a file given twice, or a
// workload it ran with other parameters than an earlier report.
std::string pool(const std::string& path, ReportData& report, Pooled& into,
                 std::map<std::string, std::pair<Json, std::string>>& params_of) {
  for (auto& r : report.runs) {
    auto [it, fresh] = params_of.emplace(r.workload, std::pair{r.params, path});
    if (!fresh && it->second.first != r.params)
      return fmt::format("{} runs {} with {}, {} with {}: runs of other parameters are not pooled in one cell; "
                         "table them apart, or run one under another name (a suite entry's \"name\")",
                         it->second.second, r.workload, params_text(it->second.first), path, params_text(r.params));
  }
  for (auto& [w, h] : report_headlines(report)) into.headlines.emplace(w, h);
  for (auto& [w, d] : declared_from_manifest(report.manifest, report.runs)) into.declared[w].insert(d.begin(), d.end());
  if (report.context.contains("host") && report.context["host"].is_string())
    into.hosts.insert(report.context["host"].get<std::string>());
  for (auto& r : report.runs) {
    r.role.clear();
    into.runs.push_back(std::move(r));
  }
  return "";
}

int read_all(const std::vector<std::string>& paths, Pooled& out) {
  namespace fs = std::filesystem;
  std::map<std::string, std::pair<Json, std::string>> params_of;
  for (size_t i = 0; i < paths.size(); ++i) {
    std::error_code ec;
    for (size_t j = 0; j < i; ++j)
      if (fs::equivalent(paths[i], paths[j], ec))
        return bad_input(kWhoTable, fmt::format("{} is given twice (as {} and {}): its runs would count twice", paths[i],
                                           paths[j], paths[i]));
    if (std::FILE* f = std::fopen(paths[i].c_str(), "rb")) std::fclose(f);
    else return bad_input(kWhoTable, fmt::format("cannot read {}: {}", paths[i], std::strerror(errno)));
    std::string error;
    ReadSettings settings;
    settings.series = false;
    auto report = read_report(paths[i], error, settings);
    if (!report) return bad_input(kWhoTable, error);
    if (auto e = pool(paths[i], *report, out, params_of); !e.empty()) return bad_input(kWhoTable, e);
  }
  return 0;
}

}  // namespace

int table_command(const Options& o) {
  Pooled p;
  if (int rc = read_all(o.inputs, p)) return rc;
  if (auto e = check_matrix_metrics(p.runs, o.metrics); !e.empty()) return bad_input(kWhoTable, e);
  const Matrix m = allocator_matrix(p.runs, p.headlines, o.metrics, p.declared);
  const char* item = o.show_format == "markdown" ? "- " : "";
  std::string pooled;
  if (o.inputs.size() > 1)
    pooled = fmt::format("{}from {} reports: the runs of a workload under an allocator in several of them are pooled "
                         "in one cell (their parameters agree){}\n",
                         item, o.inputs.size(),
                         p.hosts.size() > 1 ? fmt::format("; made on {} hosts", p.hosts.size()) : std::string());
  if (o.show_format == "csv") fmt::print("{}", matrix_csv(m));
  else if (o.show_format == "markdown") fmt::print("{}{}", matrix_markdown(m), pooled);
  else fmt::print("{}{}", matrix_text(m, o.table.width), pooled);
  return 0;
}

}  // namespace mh
