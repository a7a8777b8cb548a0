// Comparison exports (see compare_report.h).
#include "compare_report.h"

#include <fmt/format.h>

#include <cmath>

#include "summary.h"

namespace mh {

using namespace compare;

namespace {

const char* direction_name(Direction d) {
  return d == Direction::Lower ? "lower" : d == Direction::Higher ? "higher" : "none";
}

Json side_json(const SideStats& s) {
  return Json{{"median", s.median}, {"min", s.min}, {"max", s.max}, {"mad", s.mad}, {"n", s.n}, {"values", s.values}};
}

Json finite_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

std::string unit_of(const std::string& metric) {
  for (const auto& d : run_metrics())
    if (metric == d.name) return d.unit;
  return "";
}

// Display of a value in the metric's natural unit: KiB as MB, the rest as is.
std::string show(const std::string& metric, double v) {
  if (metric.size() > 3 && metric.compare(metric.size() - 3, 3, "_kb") == 0) return fmt::format("{:.1f} MB", v * 1024 / 1e6);
  if (std::fabs(v) >= 1000 || v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

std::string pct(double v) {
  if (!std::isfinite(v)) return v > 0 ? "+inf" : "-inf";
  return fmt::format("{:+.1f}%", v * 100);
}

// The tables show the metrics that can regress; the JSON has every metric.
bool shown(const MetricComparison& m) { return m.rule.direction != Direction::None; }

struct Column {
  const char* title;
  std::string (*cell)(const MetricComparison&);
};

const Column kColumns[] = {
    {"metric", [](const MetricComparison& m) { return m.metric; }},
    {"baseline", [](const MetricComparison& m) {
       return fmt::format("{} ({}-{})", show(m.metric, m.baseline.median), show(m.metric, m.baseline.min),
                          show(m.metric, m.baseline.max));
     }},
    {"candidate", [](const MetricComparison& m) {
       return fmt::format("{} ({}-{})", show(m.metric, m.candidate.median), show(m.metric, m.candidate.min),
                          show(m.metric, m.candidate.max));
     }},
    {"change", [](const MetricComparison& m) { return pct(m.change); }},
    {"noise floor", [](const MetricComparison& m) { return m.baseline_again ? pct(m.noise_floor).substr(1) : std::string("-"); }},
    {"threshold", [](const MetricComparison& m) { return fmt::format("{:.0f}%", m.rule.threshold * 100); }},
    {"p (Holm)", [](const MetricComparison& m) { return fmt::format("{:.3f}", m.p_adjusted); }},
    {"verdict", [](const MetricComparison& m) { return std::string(verdict_name(m.verdict)); }},
};

std::string headline(const Comparison& c) {
  std::string verdict = c.regressed() ? "REGRESSION" : "no regression";
  return fmt::format("{}: candidate {} against baseline {}, {}, alpha {}", verdict, c.candidate, c.baseline,
                     sample_size(c), c.alpha);
}

}  // namespace

Json comparison_to_json(const Comparison& c, const Json& context) {
  Json workloads = Json::array();
  for (const auto& w : c.workloads) {
    Json metrics = Json::array();
    for (const auto& m : w.metrics)
      metrics.push_back(Json{{"metric", m.metric},
                             {"unit", unit_of(m.metric)},
                             {"direction", direction_name(m.rule.direction)},
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
                             {"verdict", verdict_name(m.verdict)}});
    workloads.push_back(Json{{"workload", w.workload}, {"params", w.params}, {"metrics", metrics}});
  }
  return Json{{"schema", kComparisonSchema},
              {"context", context},
              {"baseline", {{"name", c.baseline}}},
              {"candidate", {{"name", c.candidate}}},
              {"rounds", c.rounds},
              {"sample_size", sample_size(c)},
              {"baseline_runs", c.baseline_runs},
              {"candidate_runs", c.candidate_runs},
              {"alpha", c.alpha},
              {"regression", c.regressed()},
              {"failed_runs", c.failed_runs},
              {"warnings", c.warnings},
              {"workloads", workloads}};
}

std::string comparison_table(const Comparison& c) {
  std::string out;
  for (const auto& w : c.workloads) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> head;
    for (const auto& col : kColumns) head.push_back(col.title);
    rows.push_back(head);
    for (const auto& m : w.metrics) {
      if (!shown(m)) continue;
      std::vector<std::string> r;
      for (const auto& col : kColumns) r.push_back(col.cell(m));
      rows.push_back(r);
    }
    std::vector<size_t> width(head.size(), 0);
    for (const auto& r : rows)
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    out += "\n" + w.workload + "\n";
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
  for (const auto& warn : c.warnings) out += "warning: " + warn + "\n";
  out += headline(c) + "\n";
  return out;
}

std::string comparison_markdown(const Comparison& c) {
  std::string out = fmt::format("### memharness: {}\n\n", headline(c));
  for (const auto& warn : c.warnings) out += "> **Warning:** " + warn + "\n\n";
  for (const auto& w : c.workloads) {
    out += "**" + w.workload + "**\n\n|";
    for (const auto& col : kColumns) out += std::string(" ") + col.title + " |";
    out += "\n|";
    for (size_t i = 0; i < std::size(kColumns); ++i) out += i == 0 || i + 1 == std::size(kColumns) ? " --- |" : " ---: |";
    out += "\n";
    for (const auto& m : w.metrics) {
      if (!shown(m)) continue;
      out += "|";
      for (const auto& col : kColumns) {
        std::string cell = col.cell(m);
        if (std::string(col.title) == "verdict" && m.verdict == Verdict::Regression) cell = "**" + cell + "**";
        out += " " + cell + " |";
      }
      out += "\n";
    }
    out += "\n";
  }
  out += "Baseline and candidate: median (min-max) of the runs; change: candidate median against baseline median; "
         "noise floor: the larger of baseline against baseline run again and the scatter of the baseline's runs; p: two-sided "
         "Mann-Whitney U, Holm-adjusted over the workload's metrics.\n";
  return out;
}

}  // namespace mh
