// Console progress and summary table (see console.h).
#include "console.h"

#include <fmt/format.h>
#include <unistd.h>

#include "summary.h"

namespace mh {

namespace {

struct Column {
  const char* title;
  const char* metric;
  double scale;  // multiply the metric by this for display
  int decimals;
};

const Column kColumns[] = {
    {"peak RSS MB", "peak_rss_kb", 1024.0 / 1e6, 1},
    {"final RSS MB", "final_rss_kb", 1024.0 / 1e6, 1},
    {"minor faults", "minflt", 1, 0},
    {"wall ms", "wall_ms", 1, 0},
    {"CPU ms", "cpu_ms", 1, 0},
};

std::string cell(const stats::Summary* s, const Column& c) {
  if (!s) return "-";
  auto f = [&](double v) { return fmt::format("{:.{}f}", v * c.scale, c.decimals); };
  if (s->n == 1 || s->min == s->max) return f(s->median);
  return fmt::format("{} ({}-{})", f(s->median), f(s->min), f(s->max));
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

std::string summary_table(const std::vector<RunRecord>& runs) {
  auto rows = summarize_runs(runs);
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> header = {"workload", "allocator", "runs ok"};
  for (const auto& c : kColumns) header.push_back(c.title);
  table.push_back(header);
  for (const auto& row : rows) {
    std::vector<std::string> line = {row.workload, row.allocator, fmt::format("{}/{}", row.runs_ok, row.runs_total)};
    for (const auto& c : kColumns) line.push_back(cell(row.find(c.metric), c));
    table.push_back(line);
  }
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
  out += "median (min-max) over the runs that are ok; MB = 10^6 bytes\n";
  for (const auto& r : runs)
    if (r.status != Status::Ok)
      out += fmt::format("run {} under {} repetition {}: {}: {}\n", r.workload, r.allocator.name, r.repetition,
                         status_name(r.status), r.exit.error);
  return out;
}

}  // namespace mh
