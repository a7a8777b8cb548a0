// Console progress and summary table (see console.h).
#include "report/console.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "core/metrics.h"
#include "core/summary.h"

namespace mh {

namespace {

// A column of the table: a metric of the summary scaled for display.
struct Column {
  std::string title;  // with the unit
  std::string metric;
  double scale;  // multiply the metric by this for display
  int decimals;  // -1: three significant digits
};

Column column_of(const std::string& title, const std::string& metric, const std::string& unit, int decimals) {
  const DisplayUnit d = display_unit(unit);
  if (d.unit == "MB") decimals = 1;
  return {d.unit.empty() || d.unit == "faults" ? title : title + " " + d.unit, metric, d.scale, decimals};
}

// The registry's columns, in its order (RSS at exit is last: it is read after
// the workload's teardown and is not its result; the headline columns before
// these are).
std::vector<Column> generic_columns() {
  std::vector<Column> out;
  for (const auto& m : metric_registry())
    if (*m.title) out.push_back(column_of(m.title, m.name, m.unit, 0));
  return out;
}

Column headline_column(const Headline& h) { return column_of(h.title, h.metric, h.unit, -1); }

std::string number(double v, int decimals) {
  if (decimals < 0) {
    const double a = std::fabs(v);
    decimals = a == 0 || a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  }
  return fmt::format("{:.{}f}", v, decimals);
}

std::string cell(const stats::Summary* s, const Column& c) {
  if (!s) return "-";
  auto f = [&](double v) { return number(v * c.scale, c.decimals); };
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

// One block: the header, a rule, and a line per row, columns aligned.
std::string block(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& lines) {
  std::vector<std::vector<std::string>> table = {header};
  table.insert(table.end(), lines.begin(), lines.end());
  std::vector<size_t> width(header.size(), 0);
  for (const auto& line : table)
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  std::string out;
  for (size_t r = 0; r < table.size(); ++r) {
    for (size_t i = 0; i < table[r].size(); ++i) {
      // Text columns left-aligned, numbers right-aligned.
      out += i < 2 ? fmt::format("{:<{}}", table[r][i], width[i]) : fmt::format("{:>{}}", table[r][i], width[i]);
      out += i + 1 < table[r].size() ? "  " : "\n";
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

void Progress::starting(size_t index, const std::string& workload, const std::string& allocator, int repetition) {
  index_ = index;
  if (!enabled_) return;
  current_ = fmt::format("[{}/{}] {} under {}, repetition {}", index + 1, total_, workload, allocator, repetition);
  fmt::print(stderr, "\r\033[K{} ...", current_);
  std::fflush(stderr);
}

void Progress::running(double elapsed_ms, const std::string& last_mark) {
  if (!enabled_) return;
  fmt::print(stderr, "\r\033[K{}: {:.1f} s{}", current_, elapsed_ms / 1000,
             last_mark.empty() ? "" : ", past mark " + last_mark);
  std::fflush(stderr);
}

void Progress::finished(const RunRecord& r) {
  if (!enabled_) return;
  fmt::print(stderr, "\r\033[K[{}/{}] {} under {}, repetition {}: {} ({:.0f} ms, peak {:.1f} MB)", index_ + 1, total_,
             r.workload, r.allocator.name, r.repetition, status_name(r.status), r.wall_ms, r.peak_rss_kb * 1024.0 / 1e6);
  std::fflush(stderr);
}

void Progress::clear() {
  if (enabled_) fmt::print(stderr, "\r\033[K");
}

namespace {

// The summary as a block per workload (header and lines), in order of first
// appearance, each with its own headline columns; what both the terminal table
// and the markdown show.
struct Block {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> lines;
};

std::vector<Block> summary_blocks(const std::vector<RunRecord>& runs,
                                  const std::map<std::string, std::vector<Headline>>& headlines, bool& ranked) {
  std::vector<std::string> workloads;
  std::map<std::string, std::vector<SummaryRow>> rows;
  for (auto& row : summarize_runs(runs)) {
    if (!rows.count(row.workload)) workloads.push_back(row.workload);
    rows[row.workload].push_back(std::move(row));
  }
  std::vector<Block> out;
  ranked = false;
  for (const auto& w : workloads) {
    const auto it = headlines.find(w);
    const std::vector<Headline> none;
    const auto& heads = it == headlines.end() ? none : it->second;
    std::vector<Column> columns;
    for (const auto& h : heads) columns.push_back(headline_column(h));
    const auto generic = generic_columns();
    columns.insert(columns.end(), generic.begin(), generic.end());
    Block b;
    b.header = {"workload", "allocator", "runs ok"};
    for (const auto& c : columns) b.header.push_back(c.title);
    auto& group = rows[w];
    rank(group, heads);
    ranked = ranked || !heads.empty();
    for (const auto& row : group) {
      std::vector<std::string> line = {row.workload, row.allocator, fmt::format("{}/{}", row.runs_ok, row.runs_total)};
      for (const auto& c : columns) line.push_back(cell(row.find(c.metric), c));
      b.lines.push_back(line);
    }
    out.push_back(std::move(b));
  }
  return out;
}

std::string summary_notes(const std::vector<RunRecord>& runs, bool ranked, const char* item) {
  std::string out = fmt::format("{}median (min-max) over the runs that are ok; {}\n", item, kUnitConvention);
  if (ranked)
    out += fmt::format("{}the columns before peak RSS are the workload's own result, best first; RSS at exit is read "
                       "after the workload's teardown\n",
                       item);
  for (const auto& r : runs)
    if (r.status != Status::Ok)
      out += fmt::format("{}run {} under {} repetition {}: {}: {}\n", item, r.workload, r.allocator.name, r.repetition,
                         status_name(r.status), r.exit.error);
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string summary_table(const std::vector<RunRecord>& runs,
                          const std::map<std::string, std::vector<Headline>>& headlines) {
  bool ranked = false;
  std::string out;
  for (const auto& b : summary_blocks(runs, headlines, ranked)) {
    if (!out.empty()) out += "\n";
    out += block(b.header, b.lines);
  }
  return out + summary_notes(runs, ranked, "");
}

std::string summary_markdown(const std::vector<RunRecord>& runs,
                             const std::map<std::string, std::vector<Headline>>& headlines) {
  bool ranked = false;
  std::string out;
  for (const auto& b : summary_blocks(runs, headlines, ranked)) {
    out += "|";
    for (const auto& h : b.header) out += " " + h + " |";
    out += "\n|";
    for (size_t i = 0; i < b.header.size(); ++i) out += i < 2 ? " --- |" : " ---: |";
    out += "\n";
    for (const auto& line : b.lines) {
      out += "|";
      for (const auto& c : line) out += " " + c + " |";
      out += "\n";
    }
    out += "\n";
  }
  return out + summary_notes(runs, ranked, "- ");
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
