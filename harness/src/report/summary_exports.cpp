// The run summary as markdown and CSV (see summary_exports.h).
#include "report/summary_exports.h"

#include <fmt/format.h>

#include "core/escape.h"
#include "core/summary.h"

namespace mh {

namespace {

std::string markdown_table(const SummaryBlock& b) {
  std::string out = "|";
  // Appended piece by piece: GCC 12 warns (-Wrestrict) on " " + a temporary string.
  for (const auto& h : b.header) out.append(" ").append(escape::markdown(h)).append(" |");
  out += "\n|";
  for (size_t i = 0; i < b.header.size(); ++i) out += i < 2 ? " --- |" : " ---: |";
  out += "\n";
  for (const auto& line : b.lines) {
    out += "|";
    for (const auto& c : line) out.append(" ").append(escape::markdown(c)).append(" |");
    out += "\n";
  }
  return out;
}

}  // namespace

std::string summary_markdown(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines,
                             const std::string& reference) {
  const SummaryBlocks s = summary_blocks(runs, headlines, reference);
  std::string out;
  for (const auto& b : s.blocks) out += markdown_table(b) + "\n";
  return out + summary_notes(runs, s, "- ", escape::markdown);
}

std::string summary_csv(const std::vector<RunRecord>& runs, const DeclaredMetrics& declared) {
  std::string out = "workload,allocator,role,runs_ok,runs_total,metric,unit,median,min,max,n\n";
  for (const auto& row : summarize_runs(runs))
    for (const auto& [metric, s] : row.metrics)
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", escape::csv(row.workload), escape::csv(row.allocator),
                         escape::csv(row.role), row.runs_ok, row.runs_total, escape::csv(metric),
                         escape::csv(metric_info(metric, row.workload, declared).unit), s.median, s.min, s.max, s.n);
  return out;
}

}  // namespace mh
