// The history command: harness history add|merge|show|steps|ack|page over one
// store file (docs/history.md). Exit 0 done, 1 a regression step among the
// last --last revisions (steps), 2 bad input (a file that is not a store).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <set>

#include "commands/commands.h"
#include "commands/from_options.h"
#include "commands/history_add.h"
#include "commands/resolve.h"
#include "commands/series_names.h"
#include "compare/compare.h"
#include "core/units.h"
#include "history/page.h"
#include "history/steps.h"
#include "history/store.h"
#include "report/report_json.h"
#include "sys/output_file.h"

namespace mh {

namespace {

constexpr const char* kWhoHistory = "harness history";

int add_reports(const Options& o) {
  // Every report is read before any is added: a bad one adds nothing.
  std::vector<ReportData> reports;
  for (const auto& path : o.inputs) {
    std::string error;
    auto report = read_report(path, error);
    if (!report) return bad_input(kWhoHistory, error);
    reports.push_back(std::move(*report));
  }
  size_t added = 0, total = 0;
  for (const auto& report : reports) {
    std::string error;
    auto n = add_to_history(o.history.target, report, error);
    if (!n) return bad_input(kWhoHistory, error);
    added += *n;
    total += report.runs.size();
  }
  fmt::print("{} runs added to {} ({} already there)\n", added, escape::terminal(o.history.target.file),
             total - added);
  return 0;
}

int merge_stores(const Options& o) {
  std::string error;
  auto store = history::Store::open(o.inputs[0], error);
  if (!store) return bad_input(kWhoHistory, error);
  for (size_t i = 1; i < o.inputs.size(); ++i) {
    auto added = store->merge_from(o.inputs[i], error);
    if (!added) return bad_input(kWhoHistory, error);
    fmt::print("{} runs added to {} from {}\n", *added, escape::terminal(o.inputs[0]), escape::terminal(o.inputs[i]));
  }
  return 0;
}

// A series' steps under the thresholds' rule for its metric.
struct Judged {
  history::Series series;
  MetricRule rule;
  std::vector<history::Step> steps;
};

// Revisions name the same commit when one is a prefix of the other (c3b7a36 and its full hash).
bool same_revision(const std::string& a, const std::string& b) {
  return !a.empty() && !b.empty() && (a.rfind(b, 0) == 0 || b.rfind(a, 0) == 0);
}

const history::Acknowledgement* acknowledged(const std::vector<history::Acknowledgement>& acks,
                                             const history::Series& s, const history::Step& step) {
  for (const auto& a : acks)
    if (a.workload == s.workload && a.allocator == s.allocator && a.metric == s.metric &&
        same_revision(a.revision, step.revision))
      return &a;
  return nullptr;
}

std::optional<std::vector<Judged>> judge_store(const Options& o, history::Store& store, std::string& error) {
  auto thresholds = load_thresholds(thresholds_file(find_layout(), o), error);
  if (!thresholds) return std::nullopt;
  const HistoryOptions& h = o.history;
  const history::StepRule rule{size_t(h.min_segment), h.alpha};
  auto series = store.series({h.metric, h.workload, h.allocator, h.target.machine}, error);
  if (!series) {
    error = h.target.file + ": " + error;
    return std::nullopt;
  }
  std::vector<Judged> out;
  for (auto& s : *series) {
    const MetricRule r = thresholds->rule_for(s.metric, "", s.workload);
    if (h.metric.empty() && r.direction == compare::Direction::None) continue;  // informational
    auto steps = history::find_steps(s, r, rule);
    out.push_back({std::move(s), r, std::move(steps)});
  }
  return out;
}

// A series' metric in its display unit (MB, ms), as tables show it.
DisplayUnit series_unit(const history::Series& s) {
  return display_unit(metric_info(s.metric, s.workload, {}).unit);
}

// "idle-return total=64M · scav · host: peak_rss_kb (MB)": the name as the user
// gave it, the parameters that differ from the defaults, the display unit.
std::string series_title(const history::Series& s, SeriesNames& names) {
  const auto unit = series_unit(s).unit;
  return fmt::format("{} · {} · {}: {}{}", names.name(s.workload, s.params), s.allocator, s.machine, s.metric,
                     unit.empty() ? "" : " (" + unit + ")");
}

std::string step_text(const history::Step& st, const DisplayUnit& unit, const history::Acknowledgement* ack) {
  return fmt::format("{} {:+.1f}% ({} -> {}{}{}; 95% CI {:+.1f}% to {:+.1f}%, p {:.2g}){}",
                     compare::verdict_name(st.verdict), 100 * st.change, display_number(st.before, unit),
                     display_number(st.after, unit), unit.unit.empty() ? "" : " " + unit.unit,
                     st.censored ? ", censored" : "", 100 * st.ci.lo, 100 * st.ci.hi, st.p,
                     ack ? "; acknowledged: " + escape::terminal(ack->reason) : "");
}

void print_series(const Judged& j, const std::vector<history::Acknowledgement>& acks, SeriesNames& names) {
  const DisplayUnit unit = series_unit(j.series);
  fmt::print("{}\n{:<14} {:>8} {:>5} {:>12} {:>12} {:>12}  step\n", escape::terminal(series_title(j.series, names)),
             "revision", "position", "runs", "median", "min", "max");
  for (size_t i = 0; i < j.series.points.size(); ++i) {
    const auto& p = j.series.points[i];
    const auto stats = compare::censored_side_stats(p.values);
    std::string step;
    for (const auto& st : j.steps)
      if (st.index == i) step = step_text(st, unit, acknowledged(acks, j.series, st));
    fmt::print("{:<14} {:>8} {:>5} {:>12}{} {:>12} {:>12}  {}\n", escape::terminal(p.revision.substr(0, 12)),
               p.position ? std::to_string(*p.position) : "-", p.values.size(), display_number(stats.median, unit),
               stats.median_above ? "+" : " ", display_number(stats.min, unit), display_number(stats.max, unit), step);
  }
  fmt::print("\n");
}

// history show without --workload or --metric: what the store holds to choose from
// (the workloads, then the metrics of the one given), or the store's error.
std::string missing_series_choice(const Options& o, history::Store& store) {
  const HistoryOptions& h = o.history;
  std::set<std::string> workloads, metrics;
  std::string error;
  const auto series = store.series({"", h.workload, h.allocator, h.target.machine}, error);
  if (!series) return h.target.file + ": " + error;
  for (const auto& s : *series) {
    workloads.insert(s.workload);
    metrics.insert(s.metric);
  }
  if (h.workload.empty())
    return fmt::format("show needs --workload and --metric; the workloads in {}: {}", h.target.file,
                       workloads.empty() ? "none" : fmt::format("{}", fmt::join(workloads, ", ")));
  return fmt::format("show needs --metric; the metrics of {} in {}: {}", h.workload, h.target.file,
                     metrics.empty() ? "none" : fmt::format("{}", fmt::join(metrics, ", ")));
}

int show_series(const Options& o, history::Store& store) {
  if (o.history.workload.empty() || o.history.metric.empty())
    return bad_input(kWhoHistory, escape::terminal(missing_series_choice(o, store)));
  std::string error;
  auto judged = judge_store(o, store, error);
  if (!judged) return bad_input(kWhoHistory, error);
  if (judged->empty())
    return bad_input(kWhoHistory, fmt::format("no runs of metric '{}' of workload '{}'{} in {}", o.history.metric,
                                       o.history.workload,
                                       o.history.allocator.empty() ? "" : " under '" + o.history.allocator + "'",
                                       o.history.target.file));
  const auto acks = store.acknowledgements(error);
  if (!acks) return bad_input(kWhoHistory, o.history.target.file + ": " + error);
  SeriesNames names(find_layout().libexec);
  for (const auto& j : *judged) print_series(j, *acks, names);
  return 0;
}

int list_steps(const Options& o, history::Store& store) {
  std::string error;
  auto judged = judge_store(o, store, error);
  if (!judged) return bad_input(kWhoHistory, error);
  const auto acks = store.acknowledgements(error);
  if (!acks) return bad_input(kWhoHistory, o.history.target.file + ": " + error);
  SeriesNames names(find_layout().libexec);
  int found = 0, failing = 0;
  for (const auto& j : *judged)
    for (const auto& st : j.steps) {
      const auto* ack = acknowledged(*acks, j.series, st);
      const bool recent = o.history.last > 0 && st.index + size_t(o.history.last) >= j.series.points.size();
      const bool fails = recent && !ack && st.verdict == compare::Verdict::Regression;
      failing += fails;
      ++found;
      fmt::print("{} at {}{}: {}\n", escape::terminal(series_title(j.series, names)),
                 escape::terminal(st.revision.substr(0, 12)), fails ? " (among the last revisions)" : "",
                 step_text(st, series_unit(j.series), ack));
    }
  fmt::print("{} steps in {} series; {} regressions among the last {} revisions not acknowledged\n", found,
             judged->size(), failing, o.history.last);
  return failing ? 1 : 0;
}

int acknowledge(const Options& o, history::Store& store) {
  const HistoryOptions& h = o.history;
  std::string error;
  if (!store.acknowledge({h.workload, h.allocator, h.metric, h.target.revision, h.reason}, error))
    return bad_input(kWhoHistory, h.target.file + ": " + error);
  fmt::print("step of {} under {} at {} acknowledged\n", escape::terminal(h.metric), escape::terminal(h.allocator),
             escape::terminal(h.target.revision));
  return 0;
}

int write_page(const Options& o, history::Store& store) {
  if (!o.history.repo_url.empty())
    if (auto e = history::check_repo_url(o.history.repo_url); !e.empty()) return bad_input(kWhoHistory, e);
  std::string error;
  auto judged = judge_store(o, store, error);
  if (!judged) return bad_input(kWhoHistory, error);
  std::vector<history::PageSeries> page;
  const auto acks = store.acknowledgements(error);
  if (!acks) return bad_input(kWhoHistory, o.history.target.file + ": " + error);
  SeriesNames names(find_layout().libexec);
  for (auto& j : *judged) {
    history::PageSeries ps{j.series, names.name(j.series.workload, j.series.params), j.steps, {}};
    for (const auto& st : j.steps)
      if (const auto* ack = acknowledged(*acks, j.series, st)) ps.acknowledged[st.index] = ack->reason;
    page.push_back(std::move(ps));
  }
  const auto runs = store.traces(history::shown_runs(page), error);
  if (!runs) return bad_input(kWhoHistory, o.history.target.file + ": " + error);
  if (auto e = history::write_page(o.history.out, page, *runs, o.history.repo_url); !e.empty()) return bad_input(kWhoHistory, e);
  fmt::print("{} charts written to {}/index.html\n", page.size(), escape::terminal(o.history.out));
  return 0;
}

}  // namespace

int history_command(const Options& o) {
  const auto& verb = o.history.verb;
  if (verb == "merge") return merge_stores(o);
  if (verb == "add") return add_reports(o);
  std::error_code ec;
  if (!std::filesystem::exists(o.history.target.file, ec))
    return bad_input(kWhoHistory, "no history store at " + o.history.target.file +
                               " (harness history add REPORT..., or --history FILE on run and compare, makes one)");
  std::string error;
  auto store = history::Store::open(o.history.target.file, error);
  if (!store) return bad_input(kWhoHistory, error);
  if (verb == "show") return show_series(o, *store);
  if (verb == "steps") return list_steps(o, *store);
  if (verb == "ack") return acknowledge(o, *store);
  return write_page(o, *store);
}

}  // namespace mh
