// Comparison exports (see compare_report.h).
#include "compare/compare_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "core/cells.h"
#include "core/escape.h"
#include "core/metrics.h"
#include "core/units.h"

namespace mh {

using compare::Direction;
using compare::SideStats;
using compare::Verdict;

namespace {

const char* direction_word(Direction d) {
  return d == Direction::Lower ? "lower" : d == Direction::Higher ? "higher" : "none";
}

Json side_json(const SideStats& s) {
  Json j{{"median", s.median}, {"min", s.min}, {"max", s.max}, {"mad", s.mad}, {"n", s.n}, {"values", s.values}};
  if (!s.above.empty()) {  // only then: comparisons without censored runs read as before
    j["above"] = s.above;
    j["median_above"] = s.median_above;
  }
  return j;
}

Json finite_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

// A value in the metric's display unit (units.h: memory in MB), which the
// metric column names.
std::string show(const MetricComparison& m, double v) { return display_number(v, display_unit(m.unit)); }

std::string metric_title(const MetricComparison& m) {
  const std::string unit = display_unit(m.unit).unit;
  return unit.empty() ? m.metric : fmt::format("{} ({})", m.metric, unit);
}

std::string pct(double v) {
  if (!std::isfinite(v)) return v > 0 ? "+inf" : "-inf";
  return fmt::format("{:+.1f}%", v * 100);
}

// A side's median (min-max) of the runs, as every table shows figures
// (cells.h): a median that never came as "> 3011 ms (never)".
std::string side_cell(const MetricComparison& m, const SideStats& s) {
  return figures_cell({s.median, s.min, s.max, s.n, s.above.size(), s.median_above}, display_unit(m.unit));
}

// "never -> 124 ms" when a median never came; the relative change otherwise.
std::string change_cell(const MetricComparison& m) {
  if (!m.baseline.median_above && !m.candidate.median_above) return pct(m.change);
  const std::string unit = display_unit(m.unit).unit;
  auto said = [&](const SideStats& s) { return s.median_above ? std::string("never") : show(m, s.median) + " " + unit; };
  return said(m.baseline) + " -> " + said(m.candidate);
}

// The tables show the metrics that can regress; the JSON has every metric.
bool is_shown(const MetricComparison& m) { return m.rule.direction != Direction::None; }

struct ReportColumn {
  const char* title;
  std::string (*cell)(const MetricComparison&);
};

const ReportColumn kColumns[] = {
    {"metric", metric_title},
    {"baseline", [](const MetricComparison& m) { return side_cell(m, m.baseline); }},
    {"candidate", [](const MetricComparison& m) { return side_cell(m, m.candidate); }},
    {"change", change_cell},
    {"noise floor", [](const MetricComparison& m) { return m.baseline_again ? pct(m.noise_floor).substr(1) : std::string("-"); }},
    {"threshold", [](const MetricComparison& m) { return fmt::format("{:.0f}%", m.rule.threshold * 100); }},
    {"resolution", [](const MetricComparison& m) {
       return m.resolution ? fmt::format("{:.1f}%", *m.resolution * 100) : std::string("-");
     }},
    {"p (Holm)", [](const MetricComparison& m) { return fmt::format("{:.3f}", m.p_adjusted); }},
    {"gate", [](const MetricComparison& m) { return std::string(m.gated ? "gated" : "reported"); }},
    {"verdict", [](const MetricComparison& m) { return std::string(verdict_name(m.verdict)); }},
};

bool any_censored(const Comparison& c) {
  for (const auto& w : c.workloads)
    for (const auto& m : w.metrics)
      if (m.censored && is_shown(m)) return true;
  return false;
}

constexpr const char* kGateNote =
    "gate: gated metrics state the workload's purpose and decide the verdict (docs/compare.md, --gate); reported "
    "ones are compared and shown, not gated";

constexpr const char* kNeverNote =
    "never: the time did not come within the run; it is more than the time the run had left (\"> T\"), ranked above "
    "every time below T (p: Gehan's test); its change and noise floor are of the bounds";

// "+28.7% (+16.0 to +46.2%)": the change within rounds and its interval, or
// "-" when there is none.
std::string paired_cell(const MetricComparison& m) {
  if (!m.paired) return "-";
  if (!m.paired->bounded) return fmt::format("{} (too few rounds)", pct(m.paired->change));
  return fmt::format("{} ({} to {})", pct(m.paired->change), pct(m.paired->lo), pct(m.paired->hi));
}

// A comparison run in rounds shows the change within them (any_paired).
const ReportColumn kPairedColumn = {"within rounds", paired_cell};

// What that column is, at the comparison's confidence.
std::string paired_note(const Comparison& c) {
  return fmt::format("within rounds: each round's candidate against that round's baseline (the geometric mean of its "
                     "two baseline runs), the Hodges-Lehmann estimate and its {:g}% interval (Wilcoxon signed-rank); "
                     "it sees through a machine whose speed drifts between rounds, and does not enter the verdict",
                     100 * (1 - c.alpha));
}

// --runs auto adds what the rule decided and the rounds it took.
const ReportColumn kSequentialColumns[] = {
    {"decision", [](const MetricComparison& m) { return m.decision; }},
    {"rounds", [](const MetricComparison& m) { return fmt::format("{}", m.rounds_needed); }},
};

// A column's head: with two commands, the side columns name their command
// ("baseline: ./old/app"), escaped by `escaped` for the destination.
std::string column_head(const ReportColumn& col, const Comparison& c, std::string (*escaped)(std::string_view)) {
  const std::string title = col.title;
  if (c.allocator.empty() || (title != "baseline" && title != "candidate")) return title;
  return title + ": " + escaped(title == "baseline" ? c.baseline : c.candidate);
}

// A side in the JSON: the pin's name, or the command and the allocator it ran under.
Json side_name_json(const Comparison& c, const std::string& name) {
  if (c.allocator.empty()) return Json{{"name", name}};
  return Json{{"name", name}, {"command", name}, {"allocator", c.allocator}};
}

// The change within rounds: its estimate, interval (nulls when the rounds are
// too few for one), Wilcoxon's p and the rounds; null when there is none.
Json paired_json(const MetricComparison& m) {
  if (!m.paired) return nullptr;
  const auto& p = *m.paired;
  return Json{{"rounds", p.rounds},
              {"change", finite_or_null(p.change)},
              {"ci", p.bounded ? Json{finite_or_null(p.lo), finite_or_null(p.hi)} : Json{nullptr, nullptr}},
              {"p", p.p},
              {"test", "wilcoxon-signed-rank"}};
}

// The column is shown once the rounds can bound a change (6 at 95%): with
// fewer it would only say so on every row; the JSON has the estimates.
bool any_paired(const Comparison& c) {
  for (const auto& w : c.workloads)
    for (const auto& m : w.metrics)
      if (m.paired && m.paired->bounded && is_shown(m)) return true;
  return false;
}

std::vector<ReportColumn> columns(const Comparison& c) {
  std::vector<ReportColumn> out(std::begin(kColumns), std::end(kColumns));
  if (any_paired(c)) out.insert(out.begin() + 4, kPairedColumn);  // after "change"
  if (!c.looks.empty()) out.insert(out.end(), std::begin(kSequentialColumns), std::end(kSequentialColumns));
  return out;
}

// Rows in the order a reader acts on them: regressions, then improvements,
// then the rest; gated before reported within each; else as analysed.
int row_rank(const MetricComparison& m) {
  const int by_verdict = m.verdict == Verdict::Regression ? 0 : m.verdict == Verdict::Improvement ? 1 : 2;
  return by_verdict * 2 + (m.gated ? 0 : 1);
}

std::vector<const MetricComparison*> rows_of(const WorkloadComparison& w) {
  std::vector<const MetricComparison*> rows;
  for (const auto& m : w.metrics)
    if (is_shown(m)) rows.push_back(&m);
  std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return row_rank(*a) < row_rank(*b); });
  return rows;
}

// "3 improved, 2 no change": the verdicts of `metrics` but regressions, zeros left out.
std::string counts(const std::vector<const MetricComparison*>& metrics, bool with_regressions) {
  static constexpr std::pair<Verdict, const char*> kSaid[] = {
      {Verdict::Regression, "regression"}, {Verdict::Improvement, "improved"}, {Verdict::NoChange, "no change"},
      {Verdict::Noisy, "noisy"},           {Verdict::Changed, "changed"}};
  std::vector<std::string> out;
  for (const auto& said_of : kSaid) {
    const Verdict verdict = said_of.first;
    const char* said = said_of.second;
    if (verdict == Verdict::Regression && !with_regressions) continue;
    const auto n = std::count_if(metrics.begin(), metrics.end(), [verdict](auto* m) { return m->verdict == verdict; });
    if (n == 0) continue;
    const bool plural = n > 1 && verdict == Verdict::Regression;
    out.push_back(fmt::format("{} {}{}", n, said, plural ? "s" : ""));
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

// The comparison's sample and rule: "candidate scav against baseline jemalloc, 5 rounds, alpha 0.05".
std::string what_was_compared(const Comparison& c, std::string (*escaped)(std::string_view)) {
  const std::string rule =
      c.looks.empty() ? ""
                      : fmt::format(" (--runs auto: looks at {} rounds, alpha {:.3g} each)", fmt::join(c.looks, ", "),
                                    c.alpha_look);
  const std::string under = c.allocator.empty() ? "" : " under " + escaped(c.allocator);
  return fmt::format("candidate {} against baseline {}{}, {}{}, alpha {}", escaped(c.candidate), escaped(c.baseline),
                     under, sample_size(c), rule, c.alpha);
}

// The headline: the verdict, the gated regressions by name with change and p,
// the counts of the other gated and of the reported metrics, then what was
// compared. Names escaped by `escaped` for the destination.
std::string headline(const Comparison& c, std::string (*escaped)(std::string_view)) {
  std::vector<const MetricComparison*> gated, reported;
  std::vector<std::string> regressions;
  for (const auto& w : c.workloads)
    for (const auto* m : rows_of(w)) {
      (m->gated ? gated : reported).push_back(m);
      if (m->gated && m->verdict == Verdict::Regression)
        regressions.push_back(fmt::format("{}{} {} (p {:.3f})", c.workloads.size() > 1 ? escaped(w.workload) + ":" : "",
                                          escaped(m->metric), escaped(change_cell(*m)), m->p_adjusted));
    }
  const size_t n = gated.size();
  const std::string of = fmt::format("{} gated metric{}", n, n == 1 ? "" : "s");
  std::string line;
  if (!c.incomplete.empty())
    line = fmt::format("INCOMPLETE ({}): ", escaped(c.incomplete)) +
           (regressions.empty() ? fmt::format("none of {} regressed in the runs it has", of)
                                : fmt::format("{} of {} regressed in the runs it has: ", regressions.size(), of));
  else if (!regressions.empty())
    line = fmt::format("REGRESSION in {} of {}: ", regressions.size(), of);
  else
    line = fmt::format("no regression in {}", of);
  line += fmt::format("{}", fmt::join(regressions, ", "));
  if (const std::string rest = counts(gated, false); !rest.empty()) line += "; " + rest;
  if (const std::string rest = counts(reported, true); !rest.empty()) line += "; reported: " + rest;
  return line + " -- " + what_was_compared(c, escaped);
}

std::string identity(std::string_view s) { return std::string(s); }

}  // namespace

std::string comparison_summary(const Comparison& c) { return headline(c, identity); }

Json comparison_to_json(const Comparison& c, const Json& context) {
  Json workloads = Json::array();
  for (const auto& w : c.workloads) {
    Json metrics = Json::array();
    for (const auto& m : w.metrics)
      metrics.push_back(Json{{"metric", m.metric},
                             {"unit", m.unit},
                             {"display_unit", display_unit(m.unit).unit},
                             {"display_scale", display_unit(m.unit).scale},
                             {"direction", direction_word(m.rule.direction)},
                             {"threshold", m.rule.threshold},
                             {"min_delta", m.rule.min_delta},
                             {"baseline", side_json(m.baseline)},
                             {"candidate", side_json(m.candidate)},
                             {"baseline_again", m.baseline_again ? side_json(*m.baseline_again) : Json(nullptr)},
                             {"change", finite_or_null(m.change)},
                             {"ci", {finite_or_null(m.ci.lo), finite_or_null(m.ci.hi)}},
                             {"p", m.p},
                             {"p_adjusted", m.p_adjusted},
                             {"noise_floor", finite_or_null(m.noise_floor)},
                             {"resolution", m.resolution ? Json(*m.resolution) : Json(nullptr)},
                             {"resolution_reason", m.resolution_reason},
                             {"verdict", verdict_name(m.verdict)},
                             {"gated", m.gated}});
    for (size_t i = 0; i < w.metrics.size(); ++i) {
      metrics[i]["paired"] = paired_json(w.metrics[i]);
      if (!w.metrics[i].paired) metrics[i]["paired_reason"] = w.metrics[i].paired_reason;
      if (w.metrics[i].censored) metrics[i]["test"] = "gehan";  // p of the censored ranks, not Mann-Whitney
      if (!w.metrics[i].decision.empty()) {
        metrics[i]["decision"] = w.metrics[i].decision;
        metrics[i]["rounds_needed"] = w.metrics[i].rounds_needed;
      }
    }
    workloads.push_back(Json{{"workload", w.workload}, {"params", w.params}, {"metrics", metrics}});
  }
  Json out{{"schema", kComparisonSchema},
              {"summary", comparison_summary(c)},
              {"context", context},
              {"baseline", side_name_json(c, c.baseline)},
              {"candidate", side_name_json(c, c.candidate)},
              {"rounds", c.rounds},
              {"sample_size", sample_size(c)},
              {"baseline_runs", c.baseline_runs},
              {"candidate_runs", c.candidate_runs},
              {"alpha", c.alpha},
              {"regression", c.regressed()},
              {"complete", c.incomplete.empty()},
              {"incomplete", c.incomplete.empty() ? Json(nullptr) : Json(c.incomplete)},
              {"gate", c.gate},
              {"exit_code", exit_code(c)},
              {"failed_runs", c.failed_runs},
              {"warnings", c.warnings},
              {"workloads", workloads}};
  if (!c.looks.empty()) out["sequential"] = Json{{"looks", c.looks}, {"alpha_per_look", c.alpha_look}};
  return out;
}

std::string comparison_table(const Comparison& c) {
  std::string out = headline(c, escape::terminal) + "\n";
  for (const auto& w : c.workloads) {
    std::vector<std::vector<std::string>> rows;
    const std::vector<ReportColumn> cols = columns(c);
    std::vector<std::string> head;
    for (const auto& col : cols) head.push_back(column_head(col, c, escape::terminal));
    rows.push_back(head);
    for (const auto* m : rows_of(w)) {
      std::vector<std::string> r;
      for (const auto& col : cols) r.push_back(escape::terminal(col.cell(*m)));
      rows.push_back(r);
    }
    std::vector<size_t> width(head.size(), 0);
    for (const auto& r : rows)
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    out += fmt::format("\n{}\n", escape::terminal(w.workload));
    for (size_t ri = 0; ri < rows.size(); ++ri) {
      for (size_t i = 0; i < rows[ri].size(); ++i)
        out += (i == 0 || i + 1 == rows[ri].size() ? fmt::format("{:<{}}", rows[ri][i], width[i])
                                                   : fmt::format("{:>{}}", rows[ri][i], width[i])) +
               (i + 1 < rows[ri].size() ? "  " : "\n");
      if (ri == 0) {
        size_t total = 0;
        for (auto x : width) total += x + 2;
        out += std::string(total - 2, '-') + "\n";
      }
    }
  }
  for (const auto& warn : c.warnings) out += fmt::format("warning: {}\n", escape::terminal(warn));
  out += fmt::format("baseline and candidate: median (min-max) of the runs; {}\n", kUnitConvention);
  if (any_censored(c)) out += std::string(kNeverNote) + "\n";
  if (any_paired(c)) out += fmt::format("{}\n", paired_note(c));
  out += std::string(kGateNote) + "\n";
  return out;
}

std::string comparison_markdown(const Comparison& c) {
  std::string out = fmt::format("### memharness: {}\n\n", headline(c, escape::markdown));
  for (const auto& warn : c.warnings) out += fmt::format("> **Warning:** {}\n\n", escape::markdown(warn));
  const std::vector<ReportColumn> cols = columns(c);
  for (const auto& w : c.workloads) {
    out += fmt::format("**{}**\n\n|", escape::markdown(w.workload));
    for (const auto& col : cols) out.append(" ").append(column_head(col, c, escape::markdown)).append(" |");
    out += "\n|";
    for (size_t i = 0; i < cols.size(); ++i) out += i == 0 || i + 1 == cols.size() ? " --- |" : " ---: |";
    out += "\n";
    for (const auto* row : rows_of(w)) {
      const MetricComparison& m = *row;
      out += "|";
      for (const auto& col : cols) {
        std::string cell = escape::markdown(col.cell(m));
        if (std::string(col.title) == "verdict" && m.verdict == Verdict::Regression && m.gated) cell = "**" + cell + "**";
        out.append(" ").append(cell).append(" |");
      }
      out += "\n";
    }
    out += "\n";
  }
  out += "Baseline and candidate: median (min-max) of the runs; change: candidate median against baseline median; "
         "noise floor: the larger of baseline against baseline run again and the scatter of the baseline's runs; resolution: "
         "the smallest change this comparison could have called a regression (the largest of threshold, noise floor and "
         "absolute floor, when the test can reach alpha with these runs); p: two-sided Mann-Whitney U, Holm-adjusted over "
         "the workload's gated metrics, and apart over its reported ones; " + std::string(kUnitConvention) + ".\n\n" +
         std::string(kGateNote) + ".\n";
  if (any_censored(c)) out += "\n" + std::string(kNeverNote) + "\n";
  if (any_paired(c)) out += fmt::format("\n{}.\n", paired_note(c));
  return out;
}

// Values in the display unit of the tables (MB for memory), unrounded.
std::string comparison_csv(const Comparison& c) {
  auto num = [](std::optional<double> v) { return v && std::isfinite(*v) ? fmt::format("{}", *v) : std::string(); };
  std::string out =
      "workload,metric,unit,direction,baseline_median,baseline_min,baseline_max,candidate_median,candidate_min,"
      "candidate_max,change,noise_floor,threshold,resolution,p,p_adjusted,verdict,gate\n";
  for (const auto& w : c.workloads)
    for (const auto& m : w.metrics) {
      const DisplayUnit u = display_unit(m.unit);
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", escape::csv(w.workload),
                         escape::csv(m.metric), escape::csv(u.unit), direction_word(m.rule.direction),
                         u.scale * m.baseline.median, u.scale * m.baseline.min, u.scale * m.baseline.max,
                         u.scale * m.candidate.median, u.scale * m.candidate.min, u.scale * m.candidate.max,
                         num(m.change), num(m.baseline_again ? std::optional<double>(m.noise_floor) : std::nullopt),
                         m.rule.threshold, num(m.resolution), m.p, m.p_adjusted, verdict_name(m.verdict),
                         m.gated ? "gated" : "reported");
    }
  return out;
}

}  // namespace mh
