// The run summary as markdown and CSV (see summary_exports.h).
#include "report/summary_exports.h"

#include <fmt/format.h>

#include "core/summary.h"

namespace mh {

namespace {

std::string markdown_table(const SummaryBlock& b) {
  std::string out = "|";
  for (const auto& h : b.header) out += " " + h + " |";
  out += "\n|";
  for (size_t i = 0; i < b.header.size(); ++i) out += i < 2 ? " --- |" : " ---: |";
  out += "\n";
  for (const auto& line : b.lines) {
    out += "|";
    for (const auto& c : line) out += " " + c + " |";
    out += "\n";
  }
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string summary_markdown(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines) {
  const SummaryBlocks s = summary_blocks(runs, headlines);
  std::string out;
  for (const auto& b : s.blocks) out += markdown_table(b) + "\n";
  return out + summary_notes(runs, s.ranked, "- ");
}

std::string summary_csv(const std::vector<RunRecord>& runs, const DeclaredMetrics& declared) {
  std::string out = "workload,allocator,role,runs_ok,runs_total,metric,unit,median,min,max,n\n";
  for (const auto& row : summarize_runs(runs))
    for (const auto& [metric, s] : row.metrics)
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(row.workload), csv_field(row.allocator),
                         csv_field(row.role), row.runs_ok, row.runs_total, csv_field(metric),
                         csv_field(metric_info(metric, row.workload, declared).unit), s.median, s.min, s.max, s.n);
  return out;
}

}  // namespace mh
