// Console progress and summary table (see console.h).
#include "console.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "summary.h"

namespace mh {

namespace {

// A column of the table: a metric of the summary scaled for display.
struct Column {
  std::string title;  // with the unit
  std::string metric;
  double scale;  // multiply the metric by this for display
  int decimals;  // -1: three significant digits
};

// The generic columns. RSS at exit is last: it is read after the workload's
// teardown and is not its result (the headline columns before these are).
const Column kGeneric[] = {
    {"peak RSS MB", "peak_rss_kb", 1024.0 / 1e6, 1},
    {"minor faults", "minflt", 1, 0},
    {"wall ms", "wall_ms", 1, 0},
    {"CPU ms", "cpu_ms", 1, 0},
    {"RSS at exit MB", "final_rss_kb", 1024.0 / 1e6, 1},
};

Column headline_column(const Headline& h) {
  if (h.unit == "KiB") return {h.title + " MB", h.metric, 1024.0 / 1e6, 1};
  const bool unitless = h.unit.empty() || h.unit == "count" || h.unit == "bool";
  return {unitless ? h.title : h.title + " " + h.unit, h.metric, 1, -1};
}

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

std::string summary_table(const std::vector<RunRecord>& runs,
                          const std::map<std::string, std::vector<Headline>>& headlines) {
  // A block per workload, in order of first appearance: each has its own headline columns.
  std::vector<std::string> workloads;
  std::map<std::string, std::vector<SummaryRow>> rows;
  for (auto& row : summarize_runs(runs)) {
    if (!rows.count(row.workload)) workloads.push_back(row.workload);
    rows[row.workload].push_back(std::move(row));
  }
  std::string out;
  bool ranked = false;
  for (const auto& w : workloads) {
    const auto it = headlines.find(w);
    const std::vector<Headline> none;
    const auto& heads = it == headlines.end() ? none : it->second;
    std::vector<Column> columns;
    for (const auto& h : heads) columns.push_back(headline_column(h));
    columns.insert(columns.end(), std::begin(kGeneric), std::end(kGeneric));
    std::vector<std::string> header = {"workload", "allocator", "runs ok"};
    for (const auto& c : columns) header.push_back(c.title);
    auto& group = rows[w];
    rank(group, heads);
    ranked = ranked || !heads.empty();
    std::vector<std::vector<std::string>> lines;
    for (const auto& row : group) {
      std::vector<std::string> line = {row.workload, row.allocator, fmt::format("{}/{}", row.runs_ok, row.runs_total)};
      for (const auto& c : columns) line.push_back(cell(row.find(c.metric), c));
      lines.push_back(line);
    }
    if (!out.empty()) out += "\n";
    out += block(header, lines);
  }
  out += "median (min-max) over the runs that are ok; MB = 10^6 bytes\n";
  if (ranked)
    out += "the columns before peak RSS are the workload's own result, best first; RSS at exit is read after the "
           "workload's teardown\n";
  for (const auto& r : runs)
    if (r.status != Status::Ok)
      out += fmt::format("run {} under {} repetition {}: {}: {}\n", r.workload, r.allocator.name, r.repetition,
                         status_name(r.status), r.exit.error);
  return out;
}

}  // namespace mh
