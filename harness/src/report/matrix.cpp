// The allocator matrix (see matrix.h).
#include "report/matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/escape.h"
#include "core/stats.h"
#include "core/summary.h"
#include "report/summary_exports.h"

namespace mh {

namespace {

bool directed(const std::string& better) { return better == "lower" || better == "higher"; }

Headline registry_figure(const std::string& metric) {
  const MetricSpec* m = find_metric(metric);
  return {metric, m && *m->title ? m->title : metric, m ? m->unit : "", m ? m->better : "none"};
}

// The figures of a workload's row: its headline figures with a direction,
// else peak RSS and CPU time.
std::vector<Headline> default_figures(const std::vector<Headline>& heads) {
  std::vector<Headline> out;
  for (const auto& h : heads)
    if (directed(h.better)) out.push_back(h);
  if (out.empty()) out = {registry_figure("peak_rss_kb"), registry_figure("cpu_ms")};
  return out;
}

Headline named_figure(const std::string& metric, const std::string& workload, const DeclaredMetrics& declared) {
  Headline h = registry_figure(metric);
  const MetricInfo info = metric_info(metric, workload, declared);
  if (!info.unit.empty()) h.unit = info.unit;
  if (!info.better.empty()) h.better = info.better;
  return h;
}

// x is better than y (both with figures): a median that came before one that
// never came, then the lower (or higher) median.
bool better_than(const CellFigures& x, const CellFigures& y, bool lower) {
  if (x.median_never != y.median_never) return !x.median_never;
  return lower ? x.median < y.median : x.median > y.median;
}

// A cell over the best: lower is better, cell/best; higher, best/cell; both
// with the bootstrap interval of the ratio of medians when no run never came.
std::optional<RatioFigures> ratio_to_best(const MatrixCell& c, const MatrixCell& best, const MetricRuns& cr,
                                          const MetricRuns& br, bool lower, bool& zero) {
  const CellFigures &x = *c.figures, &b = *best.figures;
  // A ratio compares amounts: over a best of 0 or less (lower is better), or of a cell of 0 or less
  // (higher is better: an RSS drop that was a rise), it says nothing.
  zero = lower ? b.median <= 0 : x.median <= 0;
  if (zero && x.median == b.median) zero = false;  // 0 against 0: the same
  if (zero) return std::nullopt;
  RatioFigures r;
  r.ratio = x.median == b.median ? 1.0 : lower ? x.median / b.median : b.median / x.median;
  if (&c == &best) return r;
  r.both_never = x.median_never && b.median_never;
  r.above = x.median_never && !b.median_never;
  if (x.never || b.never) return r;
  const auto i = lower ? stats::ratio_of_medians_interval(br.values, cr.values)
                       : stats::ratio_of_medians_interval(cr.values, br.values);
  if (i) {
    r.lo = i->lo;
    r.hi = i->hi;
  }
  return r;
}

// A figure where a ratio would stand says its unit, or that it is one.
std::string with_unit(const std::string& cell, const CellFigures& f, const DisplayUnit& u) {
  if (f.median_never) return cell;
  return u.unit.empty() ? cell + " (figure)" : cell + " " + u.unit;
}

// The cells' texts once the best is known.
void fill_texts(MatrixRow& row, const std::vector<const SummaryRow*>& rows, Matrix& m) {
  const bool lower = row.figure.better != "higher";
  const auto best = std::min_element(row.cells.begin(), row.cells.end(), [&](const MatrixCell& x, const MatrixCell& y) {
    if (!x.figures || !y.figures) return x.figures && !y.figures;
    return better_than(*x.figures, *y.figures, lower);
  });
  if (best == row.cells.end() || !best->figures) return;
  row.best_allocator = best->allocator;
  row.best_text = figures_cell(*best->figures, row.unit);  // a figure by its place: only its unit said
  if (!best->figures->median_never && !row.unit.unit.empty()) row.best_text += " " + row.unit.unit;
  // No allocator's time came: there is no best, and every cell with a figure is "never".
  const bool none_came = best->figures->median_never;
  const MetricRuns& br = *rows[size_t(best - row.cells.begin())]->find_runs(row.figure.metric);
  for (size_t i = 0; i < row.cells.size(); ++i) {
    MatrixCell& c = row.cells[i];
    if (!c.figures) {
      c.text = c.ran ? "no figure" : "not run";
      continue;
    }
    c.ratio = ratio_to_best(c, *best, *rows[i]->find_runs(row.figure.metric), br, lower, c.zero);
    c.best = directed(row.figure.better) && !none_came && c.figures->median == best->figures->median &&
             c.figures->median_never == best->figures->median_never;
    if (none_came && c.ratio) c.ratio->both_never = c.figures->median_never;
    c.text = c.ratio ? ratio_cell(*c.ratio) : with_unit(figures_cell(*c.figures, row.unit), *c.figures, row.unit);
    m.never = m.never || c.figures->never;
    m.zero = m.zero || c.zero;
  }
  m.higher = m.higher || !lower;
  m.undirected = m.undirected || !directed(row.figure.better);
}

MatrixRow matrix_row(const std::string& workload, const Headline& figure, const std::vector<SummaryRow>& rows,
                     Matrix& m) {
  MatrixRow row{workload, figure, display_unit(figure.unit), "", "", {}};
  std::vector<const SummaryRow*> of(m.allocators.size(), nullptr);
  for (size_t i = 0; i < m.allocators.size(); ++i) {
    MatrixCell c{m.allocators[i], false, std::nullopt, std::nullopt, false, false, ""};
    for (const auto& r : rows)
      if (r.workload == workload && r.allocator == m.allocators[i]) {
        c.ran = true;
        of[i] = &r;
        if (const MetricRuns* runs = r.find_runs(figure.metric)) c.figures = cell_figures(runs->values, runs->above);
      }
    row.cells.push_back(std::move(c));
  }
  fill_texts(row, of, m);
  return row;
}

MatrixTable& table_named(Matrix& m, const std::string& title) {
  for (auto& t : m.tables)
    if (t.title == title) return t;
  m.tables.push_back({title, {}});
  return m.tables.back();
}

bool has_figure(const std::vector<SummaryRow>& rows, const std::string& workload, const std::string& metric) {
  return std::any_of(rows.begin(), rows.end(),
                     [&](const SummaryRow& r) { return r.workload == workload && r.find_runs(metric); });
}

}  // namespace

Matrix allocator_matrix(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines,
                        const std::vector<std::string>& metrics, const DeclaredMetrics& declared) {
  Matrix m;
  m.allocators = table_allocators(runs);
  const std::vector<SummaryRow> rows = summarize_runs(runs);
  std::vector<std::string> workloads;
  for (const auto& r : rows)
    if (std::find(workloads.begin(), workloads.end(), r.workload) == workloads.end()) workloads.push_back(r.workload);
  if (!metrics.empty()) {
    for (const auto& metric : metrics)
      for (const auto& w : workloads) {
        if (!has_figure(rows, w, metric)) continue;
        Headline f = named_figure(metric, w, declared);
        if (const auto it = headlines.find(w); it != headlines.end())
          for (const auto& h : it->second)
            if (h.metric == metric && !h.title.empty()) f.title = h.title;  // the workload's own column title
        const std::string title = f.title == metric ? metric : fmt::format("{} ({})", f.title, metric);
        table_named(m, title).rows.push_back(matrix_row(w, f, rows, m));
      }
    return m;
  }
  const std::vector<Headline> none;
  for (const auto& w : workloads) {
    const auto it = headlines.find(w);
    for (const auto& f : default_figures(it == headlines.end() ? none : it->second)) {
      if (!has_figure(rows, w, f.metric)) continue;
      const std::string unit = display_unit(f.unit).unit;
      table_named(m, unit.empty() ? "counts" : fmt::format("figures in {}", unit))
          .rows.push_back(matrix_row(w, f, rows, m));
    }
  }
  return m;
}

std::string check_matrix_metrics(const std::vector<RunRecord>& runs, const std::vector<std::string>& metrics) {
  std::vector<std::string> valid;
  for (const auto& row : summarize_runs(runs))
    for (const auto& [name, r] : row.runs)
      if (std::find(valid.begin(), valid.end(), name) == valid.end()) valid.push_back(name);
  for (const auto& metric : metrics)
    if (std::find(valid.begin(), valid.end(), metric) == valid.end()) {
      std::string names;
      for (const auto& v : valid) names += (names.empty() ? "" : ", ") + v;
      return fmt::format("--metric {}: no run of the reports has that figure; the metrics they have: {}", metric,
                         names.empty() ? "none (no ok run)" : names);
    }
  return "";
}

SummaryBlock matrix_block(const Matrix& m, const MatrixTable& t) {
  SummaryBlock b;
  b.header = {"workload", "figure", "best"};
  for (const auto& a : m.allocators) b.header.push_back(a);
  b.leave_out.assign(b.header.size(), 0);
  for (const auto& row : t.rows) {
    const std::string lower = row.figure.better == "higher" ? " (higher is better)" : "";
    const bool none_came = !row.best_text.empty() && row.best_text[0] == '>';
    const std::string best = none_came                      ? std::string("none came:")
                             : directed(row.figure.better) ? row.best_allocator
                                                           : "lowest: " + row.best_allocator;
    std::vector<std::string> line = {row.workload, row.figure.title + lower,
                                     row.best_text.empty() ? "no figure" : best + " " + row.best_text};
    std::vector<size_t> strong;
    for (const auto& c : row.cells) {
      if (c.best) strong.push_back(line.size());
      line.push_back(c.text);
    }
    b.lines.push_back(std::move(line));
    b.strong.push_back(std::move(strong));
  }
  return b;
}

std::string matrix_notes(const Matrix& m, const char* item) {
  std::string out;
  const auto say = [&](bool when, std::string_view text) {
    if (when) out += fmt::format("{}{}\n", item, text);
  };
  say(true, fmt::format(
                "each cell: the allocator's median over the row's best allocator's (1.00 the best, 1.37 37% worse), "
                "with the 95% bootstrap interval of the ratio of medians; best: the best allocator's median (min-max) "
                "over its ok runs; three significant digits; {}",
                kUnitConvention));
  say(m.higher,
      "higher is better: the cell is the inverse, the best's median over the allocator's, so that 1.37 is 37% worse "
      "there too");
  say(m.undirected,
      "a figure without a direction (neither lower nor higher declared better): each cell over the lowest median, "
      "which the best column names; no cell is the best");
  say(m.zero,
      "a cell with its figure in its unit instead of a ratio: the best is 0 or less (lower is better) or the cell is "
      "0 or less (higher is better), where a ratio says nothing");
  say(m.never,
      "never: the time did not come before the run ended; \"> 2.10\": the allocator's median run never came, its "
      "bound (the time the run had left) over the best's median, a lower bound; \"never\": the best never came "
      "either; \"none came: > T ms (never)\": no allocator's did, T the shortest of the runs' bounds, and no cell is "
      "the best");
  say(true, "not run: no run of the workload under that allocator in the reports; no figure: no ok run has the figure");
  return out;
}

std::string matrix_text(const Matrix& m, size_t width) {
  std::string out;
  for (const auto& t : m.tables) out += fmt::format("{}{}\n", out.empty() ? "" : "\n", escape::terminal(t.title)) +
                                        block_text(matrix_block(m, t), width);
  return out + (m.tables.empty() ? "no figure to show\n" : "") + matrix_notes(m, "");
}

std::string matrix_markdown(const Matrix& m) {
  std::string out;
  for (const auto& t : m.tables) out += fmt::format("### {}\n\n", escape::markdown(t.title)) + block_markdown(matrix_block(m, t)) + "\n";
  return out + matrix_notes(m, "- ");
}

std::string matrix_csv(const Matrix& m) {
  std::string out = "table,workload,figure,metric,better,unit,allocator,median,min,max,n,never,ratio,ratio_lo,ratio_hi,best,cell\n";
  auto num = [](std::optional<double> v) { return v ? fmt::format("{}", *v) : std::string(); };
  for (const auto& t : m.tables)
    for (const auto& row : t.rows)
      for (const auto& c : row.cells) {
        const auto& f = c.figures;
        const double s = row.unit.scale;
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", escape::csv(t.title),
                           escape::csv(row.workload), escape::csv(row.figure.title), escape::csv(row.figure.metric),
                           row.figure.better, escape::csv(row.unit.unit), escape::csv(c.allocator),
                           num(f ? std::optional(f->median * s) : std::nullopt),
                           num(f ? std::optional(f->min * s) : std::nullopt),
                           num(f ? std::optional(f->max * s) : std::nullopt), f ? f->n : 0, f ? f->never : 0,
                           num(c.ratio ? std::optional(c.ratio->ratio) : std::nullopt),
                           num(c.ratio ? c.ratio->lo : std::nullopt), num(c.ratio ? c.ratio->hi : std::nullopt),
                           c.best ? 1 : 0, escape::csv(c.text));
      }
  return out;
}

}  // namespace mh
