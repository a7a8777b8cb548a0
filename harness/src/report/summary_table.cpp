// The run summary table (see summary_table.h).
#include "report/summary_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/escape.h"
#include "core/run_growth.h"
#include "core/summary.h"
#include "core/units.h"

namespace mh {

namespace {

// A column of the table: a metric of the summary in its display unit.
struct Column {
  std::string title;  // with the unit
  std::string metric;
  DisplayUnit unit;
};

Column column_of(const std::string& title, const std::string& metric, const std::string& stored_unit) {
  const DisplayUnit d = display_unit(stored_unit);
  return {d.unit.empty() || d.unit == "faults" ? title : title + " " + d.unit, metric, d};
}

// The registry's columns, in its order (RSS at exit is last: it is read after
// the workload's teardown and is not its result; the headline columns before
// these are).
std::vector<Column> registry_columns() {
  std::vector<Column> out;
  for (const auto& m : metric_registry())
    if (*m.title) out.push_back(column_of(m.title, m.name, m.unit));
  return out;
}

// A workload's headline columns, then the registry's.
std::vector<Column> columns_of(const std::vector<Headline>& headlines) {
  std::vector<Column> out;
  for (const auto& h : headlines) out.push_back(column_of(h.title, h.metric, h.unit));
  const auto registry = registry_columns();
  out.insert(out.end(), registry.begin(), registry.end());
  return out;
}

std::string cell(const stats::Summary* s, const Column& c) {
  if (!s) return "-";
  auto f = [&](double v) { return display_number(v, c.unit); };
  if (s->n == 1 || s->min == s->max) return f(s->median);
  return fmt::format("{} ({}-{})", f(s->median), f(s->min), f(s->max));
}

// Rows of one workload, best first by its first headline figure that has a
// direction; rows without that figure (no ok run) go last.
void rank(std::vector<SummaryRow>& rows, const std::vector<Headline>& headlines) {
  auto by = std::find_if(headlines.begin(), headlines.end(),
                         [](const Headline& h) { return h.better == "lower" || h.better == "higher"; });
  if (by == headlines.end()) return;
  const bool lower = by->better == "lower";
  std::stable_sort(rows.begin(), rows.end(), [&](const SummaryRow& a, const SummaryRow& b) {
    const stats::Summary *x = a.find(by->metric), *y = b.find(by->metric);
    if (!x || !y) return x && !y;
    return lower ? x->median < y->median : x->median > y->median;
  });
}

SummaryBlock block_of(const std::vector<SummaryRow>& rows, const std::vector<Column>& columns) {
  SummaryBlock b;
  b.header = {"workload", "allocator", "runs ok"};
  for (const auto& c : columns) b.header.push_back(c.title);
  for (const auto& row : rows) {
    std::vector<std::string> line = {row.workload, row.allocator, fmt::format("{}/{}", row.runs_ok, row.runs_total)};
    for (const auto& c : columns) line.push_back(cell(row.find(c.metric), c));
    b.lines.push_back(line);
  }
  return b;
}

// One block as text: the header, a rule, and a line per row, columns aligned.
std::string aligned(const SummaryBlock& b) {
  std::vector<std::vector<std::string>> escaped = {b.header};
  escaped.insert(escaped.end(), b.lines.begin(), b.lines.end());
  for (auto& line : escaped)
    for (auto& cell : line) cell = escape::terminal(cell);
  std::vector<size_t> width(b.header.size(), 0);
  for (const auto& line : escaped)
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  std::string out;
  for (size_t r = 0; r < escaped.size(); ++r) {
    for (size_t i = 0; i < escaped[r].size(); ++i) {
      // Text columns left-aligned, numbers right-aligned.
      out += i < 2 ? fmt::format("{:<{}}", escaped[r][i], width[i]) : fmt::format("{:>{}}", escaped[r][i], width[i]);
      out += i + 1 < escaped[r].size() ? "  " : "\n";
    }
    if (r == 0) {
      size_t total = 0;
      for (auto w : width) total += w + 2;
      out += std::string(total - 2, '-') + "\n";
    }
  }
  return out;
}

}  // namespace

SummaryBlocks summary_blocks(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines) {
  std::vector<std::string> workloads;
  std::map<std::string, std::vector<SummaryRow>> rows;
  for (auto& row : summarize_runs(runs)) {
    if (!rows.count(row.workload)) workloads.push_back(row.workload);
    rows[row.workload].push_back(std::move(row));
  }
  SummaryBlocks out;
  for (const auto& w : workloads) {
    const auto it = headlines.find(w);
    const std::vector<Headline> none;
    const auto& heads = it == headlines.end() ? none : it->second;
    rank(rows[w], heads);
    out.ranked = out.ranked || !heads.empty();
    out.blocks.push_back(block_of(rows[w], columns_of(heads)));
  }
  return out;
}

std::string summary_notes(const std::vector<RunRecord>& runs, bool ranked, const char* item,
                          std::string (*escaped)(std::string_view)) {
  std::string out = fmt::format("{}median (min-max) over the runs that are ok; {}\n", item, kUnitConvention);
  if (ranked)
    out += fmt::format("{}the columns before peak RSS are the workload's own result, best first; RSS at exit is read "
                       "after the workload's teardown\n",
                       item);
  for (const auto& r : runs)
    if (r.status != Status::Ok)
      out += fmt::format("{}run {} under {} repetition {}: {}: {}\n", item, escaped(r.workload),
                         escaped(r.allocator.name), r.repetition, status_name(r.status), escaped(r.exit.error));
  for (const auto& note : growth_notes(runs, escaped)) out += item + note + "\n";
  return out;
}

std::string summary_table(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines) {
  const SummaryBlocks s = summary_blocks(runs, headlines);
  std::string out;
  for (const auto& b : s.blocks) {
    if (!out.empty()) out += "\n";
    out += aligned(b);
  }
  return out + summary_notes(runs, s.ranked, "", escape::terminal);
}

}  // namespace mh
