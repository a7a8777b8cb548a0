// The run summary table (see summary_table.h).
#include "report/summary_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/cells.h"
#include "core/escape.h"
#include "core/run_growth.h"
#include "core/stats.h"
#include "core/summary.h"
#include "core/units.h"

namespace mh {

namespace {

// A column of the table: a metric of the summary in its display unit.
struct TableColumn {
  std::string title;  // with the unit
  std::string metric;
  DisplayUnit unit;
  int leave_out = 0;
};

// The registry's columns a narrow terminal leaves out, the first named first;
// the headline figures, the ratio and peak RSS stay.
const std::vector<std::string> kLeftOutFirst = {"minflt", "cpu_ms", "final_rss_kb", "wall_ms", "peak_heap_live_kb"};

int leave_out_rank(const std::string& metric) {
  const auto it = std::find(kLeftOutFirst.begin(), kLeftOutFirst.end(), metric);
  return it == kLeftOutFirst.end() ? 0 : int(kLeftOutFirst.end() - it);
}

TableColumn column_of(const std::string& title, const std::string& metric, const std::string& stored_unit) {
  const DisplayUnit d = display_unit(stored_unit);
  return {d.unit.empty() || d.unit == "faults" ? title : title + " " + d.unit, metric, d, leave_out_rank(metric)};
}

// The registry's columns, in its order (RSS at exit after the workload's own:
// it is read after the workload's teardown and is not its result).
std::vector<TableColumn> registry_columns() {
  std::vector<TableColumn> out;
  for (const auto& m : metric_registry())
    if (*m.title) out.push_back(column_of(m.title, m.name, m.unit));
  return out;
}

std::optional<CellFigures> figures_of(const SummaryRow& row, const std::string& metric) {
  const MetricRuns* r = row.find_runs(metric);
  return r ? cell_figures(r->values, r->above) : std::nullopt;
}

// The figure the ratio column divides: the first headline that has a
// direction, else peak RSS.
Headline ratio_figure(const std::vector<Headline>& headlines) {
  for (const auto& h : headlines)
    if (h.better == "lower" || h.better == "higher") return h;
  return {"peak_rss_kb", "peak RSS", "KiB", "lower"};
}

// Rows of one workload, best first by its first headline figure that has a
// direction; a median that never came after every one that did, rows without
// that figure (no ok run) last.
void rank_rows(std::vector<SummaryRow>& rows, const std::vector<Headline>& headlines) {
  auto by = std::find_if(headlines.begin(), headlines.end(),
                         [](const Headline& h) { return h.better == "lower" || h.better == "higher"; });
  if (by == headlines.end()) return;
  const bool lower = by->better == "lower";
  std::stable_sort(rows.begin(), rows.end(), [&](const SummaryRow& a, const SummaryRow& b) {
    const auto x = figures_of(a, by->metric), y = figures_of(b, by->metric);
    if (!x || !y) return x && !y;
    if (x->median_never != y->median_never) return lower ? !x->median_never : x->median_never;
    return lower ? x->median < y->median : x->median > y->median;
  });
}

// The ratio of a row's figure to the reference row's: of the medians, with
// the bootstrap interval of stats.h; bounds when a median never came.
std::optional<RatioFigures> ratio_of(const SummaryRow& row, const SummaryRow& ref, const std::string& metric) {
  const auto x = figures_of(row, metric), r = figures_of(ref, metric);
  if (!x || !r || r->median == 0) return std::nullopt;
  RatioFigures out;
  out.ratio = x->median / r->median;
  if (&row == &ref) return out;
  out.both_never = x->median_never && r->median_never;
  out.above = x->median_never && !r->median_never;
  out.below = r->median_never && !x->median_never;
  if (x->never || r->never) return out;
  if (auto i = stats::ratio_of_medians_interval(ref.find_runs(metric)->values, row.find_runs(metric)->values)) {
    out.lo = i->lo;
    out.hi = i->hi;
  }
  return out;
}

// The reference's row among a workload's (the first in the role-less or any role).
const SummaryRow* reference_row(const std::vector<SummaryRow>& rows, const std::string& reference) {
  for (const auto& row : rows)
    if (row.allocator == reference) return &row;
  return nullptr;
}

struct BlockInput {
  const std::vector<SummaryRow>& rows;
  const std::vector<Headline>& headlines;
  std::string reference;
};

// The columns some row has a figure of: the headlines, then the registry's.
std::vector<TableColumn> present_columns(const BlockInput& in) {
  std::vector<TableColumn> all;
  for (const auto& h : in.headlines) all.push_back(column_of(h.title, h.metric, h.unit));
  for (auto& c : registry_columns()) all.push_back(std::move(c));
  std::vector<TableColumn> out;
  for (auto& c : all)
    if (std::any_of(in.rows.begin(), in.rows.end(), [&](const SummaryRow& r) { return r.find_runs(c.metric); }))
      out.push_back(std::move(c));
  return out;
}

SummaryBlock block_of(const BlockInput& in, bool& never) {
  const std::vector<TableColumn> columns = present_columns(in);
  SummaryBlock b;
  b.header = {"workload", "allocator", "runs ok"};
  b.leave_out = {0, 0, 0};
  const Headline figure = ratio_figure(in.headlines);
  const SummaryRow* ref = reference_row(in.rows, in.reference);
  const bool ratio = ref && in.rows.size() > 1 && ratio_of(*ref, *ref, figure.metric);
  const size_t ratio_at = size_t(std::count_if(columns.begin(), columns.end(), [&](const TableColumn& c) {
    return std::any_of(in.headlines.begin(), in.headlines.end(), [&](const Headline& h) { return h.metric == c.metric; });
  }));
  for (size_t i = 0; i <= columns.size(); ++i) {
    if (i == ratio_at && ratio) {
      b.header.push_back("ratio to " + in.reference);
      b.leave_out.push_back(0);
    }
    if (i == columns.size()) break;
    b.header.push_back(columns[i].title);
    b.leave_out.push_back(columns[i].leave_out);
  }
  if (ratio)
    b.ratio_legend = fmt::format("ratio to {}: each row's {} over {}'s, the ratio of the medians with its 95% bootstrap "
                                 "interval; {} is better",
                                 in.reference, column_of(figure.title, figure.metric, figure.unit).title, in.reference,
                                 figure.better);
  for (const auto& row : in.rows) {
    std::vector<std::string> line = {row.workload, row.allocator, fmt::format("{}/{}", row.runs_ok, row.runs_total)};
    for (size_t i = 0; i <= columns.size(); ++i) {
      if (i == ratio_at && ratio) {
        const auto r = ratio_of(row, *ref, figure.metric);
        line.push_back(r ? ratio_cell(*r) : std::string("no figure"));
      }
      if (i == columns.size()) break;
      const auto f = figures_of(row, columns[i].metric);
      never = never || (f && f->never);
      line.push_back(f ? figures_cell(*f, columns[i].unit) : std::string("no figure"));
    }
    b.lines.push_back(line);
  }
  return b;
}

}  // namespace

Json headlines_json(const HeadlinesByWorkload& h) {
  Json out = Json::object();
  for (const auto& [workload, heads] : h) {
    out[workload] = Json::array();
    for (const auto& x : heads)
      out[workload].push_back(Json{{"metric", x.metric}, {"title", x.title}, {"unit", x.unit}, {"better", x.better}});
  }
  return out;
}

HeadlinesByWorkload headlines_from_json(const Json& j) {
  HeadlinesByWorkload out;
  if (!j.is_object()) return out;
  for (const auto& [workload, heads] : j.items()) {
    if (!heads.is_array()) continue;
    auto& list = out[workload];
    auto text = [](const Json& o, const char* key) {
      const auto it = o.find(key);
      return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    for (const auto& x : heads)
      if (x.is_object() && !text(x, "metric").empty())
        list.push_back({text(x, "metric"), text(x, "title"), text(x, "unit"), text(x, "better")});
  }
  return out;
}

std::vector<std::string> table_allocators(const std::vector<RunRecord>& runs) {
  std::vector<std::string> out;
  for (const auto& r : runs)
    if (std::find(out.begin(), out.end(), r.allocator.name) == out.end()) out.push_back(r.allocator.name);
  return out;
}

std::string check_reference(const std::vector<RunRecord>& runs, const std::string& reference) {
  const auto names = table_allocators(runs);
  if (reference.empty() || std::find(names.begin(), names.end(), reference) != names.end()) return "";
  std::string valid;
  for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
  return fmt::format("--reference {}: no such allocator among the runs; the valid ones: {}", reference,
                     valid.empty() ? "none (no runs)" : valid);
}

SummaryBlocks summary_blocks(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines,
                             const std::string& reference) {
  std::vector<std::string> workloads;
  std::map<std::string, std::vector<SummaryRow>> rows;
  for (auto& row : summarize_runs(runs)) {
    if (!rows.count(row.workload)) workloads.push_back(row.workload);
    rows[row.workload].push_back(std::move(row));
  }
  const auto allocators = table_allocators(runs);
  const std::string ref = !reference.empty() ? reference : allocators.empty() ? "" : allocators.front();
  SummaryBlocks out;
  for (const auto& w : workloads) {
    const auto it = headlines.find(w);
    const std::vector<Headline> none;
    const auto& heads = it == headlines.end() ? none : it->second;
    rank_rows(rows[w], heads);
    out.ranked = out.ranked || !heads.empty();
    out.blocks.push_back(block_of({rows[w], heads, ref}, out.never));
    for (const auto& row : rows[w]) {
      const auto run = std::find_if(runs.begin(), runs.end(), [&](const RunRecord& r) {
        return r.workload == row.workload && r.allocator.name == row.allocator && r.role == row.role;
      });
      if (auto notes = ledger_notes(row, *run); !notes.empty())
        out.notes.push_back({row.workload, row.allocator, row.role, std::move(notes)});
    }
  }
  return out;
}

namespace {

// The ledger notes, a line per workload and code: the rows' figures, then
// what they mean.
std::string ledger_lines(const SummaryBlocks& s, const char* item, std::string (*escaped)(std::string_view)) {
  std::vector<std::pair<std::string, std::string>> keys;  // (workload, code) in order
  for (const auto& rn : s.notes)
    for (const auto& n : rn.notes)
      if (std::find(keys.begin(), keys.end(), std::pair{rn.workload, n.code}) == keys.end())
        keys.push_back({rn.workload, n.code});
  std::string out;
  for (const auto& [workload, code] : keys) {
    std::string rows, why;
    for (const auto& rn : s.notes)
      for (const auto& n : rn.notes)
        if (rn.workload == workload && n.code == code) {
          rows += fmt::format("{}{}{} ({})", rows.empty() ? "" : "; ", escaped(rn.allocator),
                              rn.role.empty() ? "" : " as " + rn.role, n.figures);
          why = n.why;
        }
    out += fmt::format("{}note ({}): {} under {}: {}\n", item, code, escaped(workload), rows, why);
  }
  return out;
}

}  // namespace

std::string summary_notes(const std::vector<RunRecord>& runs, const SummaryBlocks& s, const char* item,
                          std::string (*escaped)(std::string_view)) {
  std::string out = fmt::format("{}median (min-max) over the runs that are ok, to three significant digits; {}\n",
                                item, kUnitConvention);
  if (s.ranked)
    out += fmt::format("{}the columns before peak RSS are the workload's own result, best first; RSS at exit is read "
                       "after the workload's teardown\n",
                       item);
  if (s.never)
    out += fmt::format("{}never: the time did not come before the run ended; \"> T ms (never)\": more than T, the "
                       "time those runs had left (their median); \"k never\": k runs counted at that bound\n",
                       item);
  std::set<std::string> said;
  for (const auto& b : s.blocks)
    if (!b.ratio_legend.empty() && said.insert(b.ratio_legend).second)
      out += fmt::format("{}{}\n", item, escaped(b.ratio_legend));
  out += ledger_lines(s, item, escaped);
  for (const auto& r : runs)
    if (r.status != Status::Ok)
      out += fmt::format("{}run {} under {} repetition {}: {}: {}\n", item, escaped(r.workload),
                         escaped(r.allocator.name), r.repetition, status_name(r.status), escaped(r.exit.error));
  for (const auto& note : growth_notes(runs, escaped)) out += item + note + "\n";
  return out;
}

namespace {

constexpr size_t kShortTitle = 12;  // a title this short stays on one line ("runs ok", "wall ms")

// A title on one line when it fits over its cells, else on two, split at the
// space that makes the longer line shortest: (first line, second line).
std::pair<std::string, std::string> title_lines(const std::string& title, size_t cells, bool wrap) {
  if (!wrap || title.size() <= std::max(cells, kShortTitle)) return {"", title};
  std::pair<std::string, std::string> best = {"", title};
  for (size_t at = title.find(' '); at != std::string::npos; at = title.find(' ', at + 1)) {
    std::pair<std::string, std::string> split = {title.substr(0, at), title.substr(at + 1)};
    if (std::max(split.first.size(), split.second.size()) < std::max(best.first.size(), best.second.size()))
      best = split;
  }
  return best;
}

// A block laid out for the terminal: escaped cells, titles on one or two
// lines, each column's width.
struct Laid {
  std::vector<std::string> top, bottom;
  std::vector<std::vector<std::string>> lines;
  std::vector<size_t> width;
  size_t total() const {
    size_t t = 0;
    for (auto w : width) t += w + 2;
    return t ? t - 2 : 0;
  }
};

Laid lay_out(const SummaryBlock& b, bool wrap) {
  Laid l;
  l.lines = b.lines;
  for (auto& line : l.lines)
    for (auto& cell : line) cell = escape::terminal(cell);
  for (size_t i = 0; i < b.header.size(); ++i) {
    size_t cells = 0;
    for (const auto& line : l.lines) cells = std::max(cells, line[i].size());
    auto [top, bottom] = title_lines(escape::terminal(b.header[i]), cells, wrap);
    l.width.push_back(std::max({cells, top.size(), bottom.size()}));
    l.top.push_back(std::move(top));
    l.bottom.push_back(std::move(bottom));
  }
  return l;
}

// Titles on two lines when one line is too wide, then the columns of most
// leave_out rank left out until the block fits `width`; their titles go to
// `left_out`.
SummaryBlock fitted(SummaryBlock b, size_t width, std::vector<std::string>& left_out, bool& wrap) {
  wrap = lay_out(b, false).total() > width;
  while (lay_out(b, wrap).total() > width) {
    const auto most = std::max_element(b.leave_out.begin(), b.leave_out.end());
    if (most == b.leave_out.end() || *most == 0) break;
    const size_t i = size_t(most - b.leave_out.begin());
    if (std::find(left_out.begin(), left_out.end(), b.header[i]) == left_out.end()) left_out.push_back(b.header[i]);
    b.header.erase(b.header.begin() + long(i));
    b.leave_out.erase(b.leave_out.begin() + long(i));
    for (auto& line : b.lines) line.erase(line.begin() + long(i));
  }
  return b;
}

// Text columns left-aligned, numbers right-aligned.
std::string row_text(const std::vector<std::string>& cells, const std::vector<size_t>& width) {
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    out += i < 2 ? fmt::format("{:<{}}", cells[i], width[i]) : fmt::format("{:>{}}", cells[i], width[i]);
    out += i + 1 < cells.size() ? "  " : "";
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "\n";
}

// One block as text: the title lines, a rule, and a line per row.
std::string aligned(const SummaryBlock& b, bool wrap) {
  const Laid l = lay_out(b, wrap);
  std::string out;
  if (std::any_of(l.top.begin(), l.top.end(), [](const std::string& t) { return !t.empty(); }))
    out += row_text(l.top, l.width);
  out += row_text(l.bottom, l.width) + std::string(l.total(), '-') + "\n";
  for (const auto& line : l.lines) out += row_text(line, l.width);
  return out;
}

}  // namespace

std::string block_text(const SummaryBlock& b, size_t width) { return aligned(b, lay_out(b, false).total() > width); }

std::string summary_table(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines,
                          const TableSettings& settings) {
  const SummaryBlocks s = summary_blocks(runs, headlines, settings.reference);
  std::string out;
  std::vector<std::string> left_out;
  for (const auto& b : s.blocks) {
    if (!out.empty()) out += "\n";
    bool wrap = false;
    const SummaryBlock shown = settings.wide ? b : fitted(b, settings.width, left_out, wrap);
    out += aligned(shown, wrap);
  }
  out += summary_notes(runs, s, "", escape::terminal);
  if (!left_out.empty()) {
    std::string names;
    for (const auto& t : left_out) names += (names.empty() ? "" : ", ") + escape::terminal(t);
    out += fmt::format("not shown, to fit {} columns: {} (--wide shows every column)\n", settings.width, names);
  }
  return out;
}

}  // namespace mh
