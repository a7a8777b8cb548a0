// The sweep command: one allocator over a grid of one or two options, every
// point run interleaved like a plain run, then per workload a table of two
// metrics with the points no other point beats on both (the Pareto front),
// a JSON of that table, and optionally its plot.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "commands/commands.h"
#include "commands/execute.h"
#include "commands/from_options.h"
#include "commands/resolve.h"
#include "commands/sweep.h"
#include "core/summary.h"
#include "core/units.h"
#include "report/summary_table.h"
#include "report/context.h"
#include "report/output_names.h"
#include "report/report_json.h"
#include "sys/spawn.h"
#include "sys/output_file.h"

namespace mh {

namespace {

constexpr const char* kWhoSweep = "harness sweep";

struct Preset {
  const char* name;
  const char* grid;
  const char* about;
};
const Preset kPresets[] = {
    {"scav-purge", "scav:purge_delay_ms=10|100|1000|10000", "scav's delay between a free and its purge"},
    {"jemalloc-decay", "jemalloc:dirty_decay_ms=0|100|1000|10000", "jemalloc's dirty page decay (default 10 s)"},
    {"jemalloc-decay-bg", "jemalloc:background_thread=true,dirty_decay_ms=0|100|1000|10000",
     "the same with jemalloc's background purging thread"},
    // mimalloc 2.0.9 calls its purge delay decommit_delay (purge_delay from 2.1 on).
    {"mimalloc-purge", "mimalloc:decommit_delay=0|25|250|2500", "mimalloc's delay before decommitting freed memory"},
    {"tcmalloc-release", "tcmalloc:release_rate=0|1|10", "gperftools' rate of returning free pages (0: never)"},
};

std::string preset_names() {
  std::string s;
  for (const auto& p : kPresets) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

}  // namespace

std::optional<std::vector<std::string>> expand_grid(const std::string& grid, std::string& error) {
  const auto colon = grid.find(':');
  if (colon == std::string::npos || colon + 1 == grid.size()) {
    error = "'" + grid + "' is not a grid: give FAMILY:option=a|b|c (one or two options with values separated by |)";
    return std::nullopt;
  }
  const std::string head = grid.substr(0, colon);
  std::vector<std::pair<std::string, std::vector<std::string>>> options;
  size_t varied = 0;
  std::string rest = grid.substr(colon + 1);
  for (size_t pos = 0; pos <= rest.size();) {
    size_t comma = rest.find(',', pos);
    if (comma == std::string::npos) comma = rest.size();
    const std::string item = rest.substr(pos, comma - pos);
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      error = "in grid '" + grid + "': '" + item + "' is not option=value|value";
      return std::nullopt;
    }
    std::vector<std::string> values;
    const std::string all = item.substr(eq + 1);
    for (size_t p = 0; p <= all.size();) {
      size_t bar = all.find('|', p);
      if (bar == std::string::npos) bar = all.size();
      if (bar == p) {
        error = "in grid '" + grid + "': an empty value of " + item.substr(0, eq);
        return std::nullopt;
      }
      values.push_back(all.substr(p, bar - p));
      p = bar + 1;
    }
    varied += values.size() > 1;
    options.push_back({item.substr(0, eq), values});
    pos = comma + 1;
  }
  if (varied == 0 || varied > 2) {
    error = "grid '" + grid + "' varies " + std::to_string(varied) + " options; a sweep varies one or two";
    return std::nullopt;
  }
  std::vector<std::string> points = {""};
  for (const auto& [name, values] : options) {
    std::vector<std::string> next;
    for (const auto& p : points)
      for (const auto& v : values) next.push_back(p + (p.empty() ? "" : ",") + name + "=" + v);
    points = std::move(next);
  }
  for (auto& p : points) p = head + ":" + p;
  return points;
}

std::vector<bool> pareto_front(const std::vector<std::pair<double, double>>& points, bool x_higher, bool y_higher) {
  auto better_or_equal = [](double a, double b, bool higher) { return higher ? a >= b : a <= b; };
  auto strictly_better = [](double a, double b, bool higher) { return higher ? a > b : a < b; };
  std::vector<bool> front(points.size(), true);
  for (size_t i = 0; i < points.size(); ++i)
    for (size_t j = 0; j < points.size() && front[i]; ++j) {
      if (i == j) continue;
      const auto &p = points[i], &q = points[j];
      if (better_or_equal(q.first, p.first, x_higher) && better_or_equal(q.second, p.second, y_higher) &&
          (strictly_better(q.first, p.first, x_higher) || strictly_better(q.second, p.second, y_higher)))
        front[i] = false;
    }
  return front;
}

namespace {

// The grids to run: --allocator's, and the preset's after them.
std::optional<std::vector<std::string>> grids_asked(const Options& o, std::string& error) {
  std::vector<std::string> grids = o.grids;
  if (!o.preset.empty()) {
    const Preset* p = nullptr;
    for (const auto& q : kPresets)
      if (o.preset == q.name) p = &q;
    if (!p) {
      error = "unknown preset '" + o.preset + "'; valid: " + preset_names();
      return std::nullopt;
    }
    grids.push_back(p->grid);
  }
  if (grids.empty()) {
    error = "give a grid (--allocator 'scav:purge_delay_ms=10|100|1000') or --preset NAME (" + preset_names() + ")";
    return std::nullopt;
  }
  return grids;
}

// The jobs, and an arm per point of the grids (a point two grids share, once).
std::optional<Execution> points_execution(const Options& o, const Layout& l, const std::vector<std::string>& grids,
                                          std::string& error) {
  auto jobs = resolve_jobs(l, o.workload, o.workload_args, o.suite, o.shard, error);
  if (!jobs) return std::nullopt;
  Execution e;
  e.jobs = *jobs;
  std::set<std::string> labels;
  for (const auto& g : grids) {
    auto points = expand_grid(g, error);
    if (!points) return std::nullopt;
    for (const auto& text : *points) {
      auto spec = resolve_allocator(l, text, error);
      if (!spec) return std::nullopt;
      if (labels.insert(spec->label).second) e.arms.push_back({*spec, ""});
    }
  }
  return e;
}

// One of the two metrics of the table and the plot.
struct Axis {
  std::string metric;
  MetricInfo info;  // its unit and which way is better
};

// A metric of the harness, a perf counter, or one a job's workload declares.
bool known_metric(const std::string& m, const std::vector<Job>& jobs, const DeclaredMetrics& declared) {
  return find_metric(m) || m.rfind("perf.", 0) == 0 || std::any_of(jobs.begin(), jobs.end(), [&](const Job& j) {
           return find_declared(declared, j.workload.name, m) != nullptr;
         });
}

// --x and --y (default rss_area_mb_s across, minflt up), each a metric of these workloads.
std::optional<std::pair<Axis, Axis>> axes_asked(const Options& o, const std::vector<Job>& jobs,
                                               const DeclaredMetrics& declared, std::string& error) {
  const std::string x = o.x_metric.empty() ? "rss_area_mb_s" : o.x_metric,
                    y = o.y_metric.empty() ? "minflt" : o.y_metric;
  for (const auto& m : {x, y})
    if (!known_metric(m, jobs, declared)) {
      error = "--x/--y " + m + " is not a metric of these workloads: the harness's (rss_area_mb_s, "
              "after.ms_to_90pct, minflt, peak_rss_kb, ...) or workload.NAME of what they declare";
      return std::nullopt;
    }
  return std::pair{Axis{x, metric_info(x, "", declared)}, Axis{y, metric_info(y, "", declared)}};
}

std::string check_plot(const std::string& plot) {
  if (plot.empty()) return "";
  const auto ext = std::filesystem::path(plot).extension().string();
  if (ext != ".png" && ext != ".svg") return "--plot " + plot + ": the plot must end in .png or .svg";
  if (auto err = output_file::check_file(plot); !err.empty()) return "--plot: " + err;
  return "";
}

// The sweep's table beside the report of its runs.
std::string sweep_path_of(const std::string& report) {
  return report.substr(0, report.size() - (report.ends_with(".json") ? 5 : 0)) + "-sweep.json";
}

// The report of every run: --out, else a new name after the workload or suite
// (reserved with the -sweep.json beside it).
std::optional<std::string> report_path(const Options& o, std::string& error) {
  if (!o.out.empty()) {
    for (const auto& path : {o.out, sweep_path_of(o.out)})
      if (auto err = output_file::check_file(path); !err.empty()) {
        error = "--out: " + err;
        return std::nullopt;
      }
    return o.out;
  }
  const std::string name = o.suite.empty() ? o.workload : "suite-" + o.suite;
  auto reserved = reserve_new_outputs("results/sweep-" + name, {".json", "-sweep.json"}, error);
  if (reserved.empty()) return std::nullopt;
  return reserved[0];
}

// One workload's points: each allocator's medians of x and y, the front
// marked; its lines of the table are added to `table`.
Json workload_points(const Job& job, const std::vector<SummaryRow>& summary, const Axis& x, const Axis& y,
                     std::string& table) {
  std::vector<std::pair<double, double>> xy;
  Json points = Json::array();
  std::vector<std::string> labels_in_order;
  for (const auto& row : summary) {
    if (row.workload != job.workload.name) continue;
    const stats::Summary *sx = row.find(x.metric), *sy = row.find(y.metric);
    if (!sx || !sy) {
      table += fmt::format("{} {}: no value of {} ({} runs ok)\n", row.workload, row.allocator,
                           !sx ? x.metric : y.metric, row.runs_ok);
      continue;
    }
    xy.push_back({sx->median, sy->median});
    labels_in_order.push_back(row.allocator);
    points.push_back(Json{{"allocator", row.allocator},
                          {"runs_ok", row.runs_ok},
                          {"x", {{"median", sx->median}, {"min", sx->min}, {"max", sx->max}}},
                          {"y", {{"median", sy->median}, {"min", sy->min}, {"max", sy->max}}}});
  }
  auto front = pareto_front(xy, x.info.better == "higher", y.info.better == "higher");
  const DisplayUnit dx = display_unit(x.info.unit), dy = display_unit(y.info.unit);
  table += fmt::format("\n{}\n{:<46} {:>16} {:>16}  {}\n", job.workload.name, "point",
                       dx.unit.empty() ? x.metric : x.metric + " (" + dx.unit + ")",
                       dy.unit.empty() ? y.metric : y.metric + " (" + dy.unit + ")", "Pareto front");
  for (size_t i = 0; i < points.size(); ++i) {
    points[i]["pareto"] = bool(front[i]);
    table += fmt::format("{:<46} {:>16} {:>16}  {}\n", labels_in_order[i], display_number(xy[i].first, dx),
                         display_number(xy[i].second, dy), front[i] ? "*" : "");
  }
  return Json{{"workload", job.workload.name}, {"params", job.params}, {"points", points}};
}

Json axis_json(const Axis& a) {
  return {{"metric", a.metric},
          {"unit", a.info.unit},
          {"better", a.info.better},
          {"display_unit", display_unit(a.info.unit).unit},
          {"display_scale", display_unit(a.info.unit).scale}};
}

// Prints the summary and, per workload, the table of the two metrics, and
// writes the sweep's JSON; "" or the error.
std::string tabulate(const Execution& e, const std::vector<RunRecord>& runs, const std::vector<std::string>& grids,
                     const Axis& x, const Axis& y, const std::string& sweep_path) {
  const auto summary = summarize_runs(runs);
  Json workloads = Json::array();
  std::string table;
  for (const auto& job : e.jobs) workloads.push_back(workload_points(job, summary, x, y, table));
  fmt::print("{}", summary_table(runs));
  fmt::print("{}", table);
  fmt::print("* no other point is better on both; medians over the runs that are ok; {}\n", kUnitConvention);
  Json sweep = {{"schema", "memharness.sweep/1"}, {"report", e.out},   {"grids", grids},
                {"x", axis_json(x)},              {"y", axis_json(y)}, {"workloads", workloads}};
  return output_file::write_atomic(sweep_path, dump_canonical(sweep));
}

// Draws the sweep's JSON to `plot` with scripts/plot_sweep.py; false (the
// reason printed) when there is no Python with matplotlib or the plot fails.
bool draw_sweep_plot(const Layout& l, const std::string& sweep_path, const std::string& plot) {
  std::string scripts = l.share + "/scripts";
  if (!std::filesystem::exists(scripts + "/plot_sweep.py")) scripts = l.source + "/scripts";
  auto py = run_capture({"/bin/sh", scripts + "/lib/find-python", "matplotlib"});
  if (py.exit_code != 0) {
    fmt::print(stderr, "{}: no plot: {}", kWhoSweep, py.err);
    return false;
  }
  auto c = run_capture({py.out.substr(0, py.out.find('\n')), scripts + "/plot_sweep.py", sweep_path, "-o", plot}, 300);
  if (c.exit_code != 0) {
    fmt::print(stderr, "{}: the plot failed: {}{}", kWhoSweep, c.out, c.err);
    return false;
  }
  fmt::print("plot: {}\n", plot);
  return true;
}

}  // namespace

int sweep_command(const Options& o) {
  auto l = find_layout();
  std::string error;
  if (auto e = refuse_run_only(o, true); !e.empty()) return bad_input(kWhoSweep, e);
  auto grids = grids_asked(o, error);
  if (!grids) return bad_input(kWhoSweep, error);
  auto e = points_execution(o, l, *grids, error);
  if (!e) return bad_input(kWhoSweep, error);
  const DeclaredMetrics declared = declared_by_jobs(e->jobs);
  auto axes = axes_asked(o, e->jobs, declared, error);
  if (!axes) return bad_input(kWhoSweep, error);
  if (!apply_run_options(o, *e, error)) return bad_input(kWhoSweep, error);
  if (auto err = check_plot(o.plot); !err.empty()) return bad_input(kWhoSweep, err);
  auto out = report_path(o, error);
  if (!out) return bad_input(kWhoSweep, error);
  e->out = *out;
  const std::string sweep_path = sweep_path_of(e->out);
  e->plan = interleave(e->jobs.size(), e->arms.size(), o.runs, std::nullopt);
  e->context = make_context(o.argv);
  e->context["plan"] = plan_json(*e, Json{{"rounds", o.runs}, {"grids", *grids}, {"sample_ms", o.run.sample_ms}});

  std::vector<RunRecord> runs;
  auto outcome = execute(*e, runs);
  if (!outcome.error.empty()) {
    fmt::print(stderr, "{}: {}\n", kWhoSweep, outcome.error);
    return 1;
  }
  if (auto err = tabulate(*e, runs, *grids, axes->first, axes->second, sweep_path); !err.empty()) {
    fmt::print(stderr, "{}: {}\n", kWhoSweep, err);
    return 1;
  }
  fmt::print("report: {}\nsweep: {}\n", e->out, sweep_path);
  if (outcome.stop_signal) return 128 + outcome.stop_signal;
  const int rc = std::all_of(runs.begin(), runs.end(), [](const RunRecord& r) { return r.status == Status::Ok; }) ? 0 : 1;
  if (!o.plot.empty() && !draw_sweep_plot(l, sweep_path, o.plot)) return rc ? rc : 1;
  return rc;
}

}  // namespace mh
