// The squeeze command: for each allocator, the smallest --memory-limit at
// which a run keeps its speed (the search is compare/squeeze_search.h), each
// probe rounds of unlimited, limited and unlimited again, interleaved and
// judged by the compare rule. The JSON it writes after every probe is also
// the state an interrupted squeeze resumes from; the table is printed at the
// end and `harness plot squeeze` draws the JSON.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>
#include <chrono>
#include <cctype>
#include <cmath>

#include "commands/commands.h"
#include "commands/execute.h"
#include "commands/from_options.h"
#include "commands/resolve.h"
#include "compare/compare.h"
#include "compare/squeeze_search.h"
#include "core/stats.h"
#include "core/units.h"
#include "inputs/allocators.h"
#include "report/report_read.h"
#include "report/context.h"
#include "report/output_names.h"
#include "sys/cgroup.h"
#include "sys/json_read.h"
#include "sys/output_file.h"
#include "sys/spawn.h"

namespace mh {

namespace {

namespace fs = std::filesystem;

constexpr const char* kWhoSqueeze = "harness squeeze";
constexpr const char* kSchema = "memharness.squeeze/1";
constexpr uint64_t kFloorBytes = 4ull << 20;  // no limit below 4 MiB is tried
constexpr int kMoreRounds = 3;  // added at a time to a probe its interval cannot judge yet

// What is asked, the same on a resume: the jobs, allocators and the rule.
struct Question {
  Json json;
  std::string metric;
  squeeze::Settings settings;
  int rounds = 0, confirm_rounds = 0, max_rounds = 0;  // from the options
};

struct Squeeze {
  Layout layout;
  std::vector<Job> jobs;
  std::vector<AllocatorSpec> allocators;
  Thresholds thresholds;
  DeclaredMetrics declared;
  Question q;
  uint64_t seed = 0;
  std::string path, dir;  // the JSON (and state); the folder of the probes' runs
  Json results = Json::array();  // one entry per job and allocator (squeeze.h's searches)
};

// The median of `metric` over the runs of `role` that are ok; nullopt when none has it.
std::optional<double> role_median(const std::vector<RunRecord>& runs, const std::string& role, const std::string& metric) {
  std::vector<double> v;
  for (const auto& r : runs)
    if (r.role == role && r.status == Status::Ok)
      if (auto x = metric_value(r, metric)) v.push_back(*x);
  if (v.empty()) return std::nullopt;
  return stats::median(v);
}

Json number_or_null(std::optional<double> v) { return v ? Json(*v) : Json(nullptr); }

// The figure of merit: --metric, else the workload's first headline figure
// with a direction (its own result: idle-return's, not its wall time, which
// is mostly its idle), else wall time.
std::optional<std::string> figure_of_merit(const Options& o, const std::vector<Job>& jobs,
                                           const DeclaredMetrics& declared, std::string& error) {
  if (!o.metrics.empty()) {
    const std::string& m = o.metrics.front();
    const bool known = find_metric(m) || std::any_of(jobs.begin(), jobs.end(), [&](const Job& j) { return find_declared(declared, j.workload.name, m); });
    if (o.metrics.size() > 1 || !known) {
      error = fmt::format("--metric {}: give one metric that says the run's speed: wall_ms, cpu_ms, a figure the "
                          "workload declares (workload.NAME, harness --list) or a program's --load-metric (workload.NAME)",
                          fmt::join(o.metrics, " "));
      return std::nullopt;
    }
    return m;
  }
  for (const auto& h : headline_metrics(jobs.front().workload))
    if (h.better == "lower" || h.better == "higher") return h.metric;
  return std::string("wall_ms");
}


void save_squeeze(const Squeeze& s, bool complete) {
  const Json state = {{"schema", kSchema}, {"question", s.q.json}, {"seed", s.seed},
                      {"complete", complete}, {"results", s.results}};
  if (auto e = output_file::write_atomic(s.path, dump_canonical(state)); !e.empty()) fmt::print(stderr, "{}: {}\n", kWhoSqueeze, e);
}

// Where a probe's runs go: one report per job, allocator and limit.
std::string runs_path(const Squeeze& s, const Job& job, const AllocatorSpec& a, uint64_t limit) {
  std::string name = fmt::format("{}-{}-{}", job.workload.name, a.label, limit ? fmt::format("{}K", limit >> 10) : "unlimited");
  std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.'; }, '_');
  return (fs::path(s.dir) / (name + "-runs.json")).string();
}

// Runs the job under the allocator: `rounds` rounds of unlimited, limited to
// `limit` and unlimited again, interleaved (with limit 0, one unlimited run);
// the runs its report already holds are kept. nullopt when stopped (signal set).
std::optional<std::vector<RunRecord>> probe_runs(const Options& o, const Squeeze& s, const Job& job,
                                                 const AllocatorSpec& a, uint64_t limit, int rounds, int& signal) {
  Execution e;
  e.jobs = {job};
  if (limit) {
    Arm limited{a, kRoleCandidate};
    limited.memory_limit = limit;
    e.arms = {{a, kRoleBaseline}, limited, {a, kRoleBaselineAgain}};
  } else {
    e.arms = {{a, ""}};
  }
  std::string error;
  apply_run_options(o, e, error);  // checked before anything ran
  e.plan = interleave(1, e.arms.size(), rounds, s.seed ^ limit);
  e.out = runs_path(s, job, a, limit);
  e.context = make_context(o.argv);
  e.context["squeeze"] = Json{{"allocator", a.label}, {"limit_bytes", limit}};
  if (fs::exists(e.out))
    if (auto old = read_report(e.out, error))
      for (auto& r : old->runs)
        if (r.status != Status::Interrupted) e.kept.push_back(r);
  std::vector<RunRecord> runs;
  const auto outcome = execute(e, runs);
  if (outcome.stop_signal) {
    signal = outcome.stop_signal;
    return std::nullopt;
  }
  if (!outcome.error.empty()) fmt::print(stderr, "{}: {}\n", kWhoSqueeze, outcome.error);
  return runs;
}

// The figures of a probe's runs: the figure of merit on both sides, the
// limited runs' stall, limit events and OOM kills, the unlimited peaks.
Json probe_figures(const std::vector<RunRecord>& runs, const std::string& metric, const MetricComparison* m,
                   const squeeze::Speed* speed) {
  int oom = 0;
  for (const auto& r : runs) oom += r.role == kRoleCandidate && r.status == Status::Oom;
  const bool paired = m && m->paired;
  Json f = {{"fom_unlimited", m ? Json(m->baseline.median) : Json(nullptr)},
            {"fom_limited", m ? Json(m->candidate.median) : Json(nullptr)},
            {"fom_change", m ? Json(m->change) : Json(nullptr)},
            {"fom_change_within_rounds", paired ? Json(m->paired->change) : Json(nullptr)},
            {"fom_change_interval", paired && m->paired->bounded ? Json::array({m->paired->lo, m->paired->hi}) : Json(nullptr)},
            {"fom_allowed", speed ? Json(speed->allowed) : Json(nullptr)},
            {"fom_noise_floor", speed && m && m->paired ? Json(speed->floor) : Json(nullptr)},
            {"oom_kills", oom}};
  for (auto [key, role, name] : {std::tuple{"stall_ms", kRoleCandidate, "psi_some_ms"},
                                 std::tuple{"stall_unlimited_ms", kRoleBaseline, "psi_some_ms"},
                                 std::tuple{"full_stall_ms", kRoleCandidate, "psi_full_ms"},
                                 std::tuple{"max_events", kRoleCandidate, "memory_max_events"},
                                 std::tuple{"wall_ms", kRoleCandidate, "wall_ms"},
                                 std::tuple{"cgroup_peak_kb", kRoleCandidate, "cgroup_peak_kb"},
                                 std::tuple{"unlimited_peak_rss_kb", kRoleBaseline, "peak_rss_kb"},
                                 std::tuple{"unlimited_cgroup_peak_kb", kRoleBaseline, "cgroup_peak_kb"}})
    f[key] = number_or_null(role_median(runs, role, name));
  if (metric != "wall_ms") f["fom_metric"] = metric;
  return f;
}

// A probe's verdict and figures from its runs (squeeze_search.h's rule on
// the figure of merit); "decided" false when more rounds can tell and `last`
// is not set.
Json judge_probe(const Squeeze& s, const std::vector<RunRecord>& runs, uint64_t limit, int rounds, bool confirmed,
                 bool last) {
  int failed[2] = {0, 0}, oom = 0;  // unlimited, limited
  for (const auto& r : runs) {
    if (r.status != Status::Ok) ++failed[r.role == kRoleCandidate];
    oom += r.role == kRoleCandidate && r.status == Status::Oom;
  }
  CompareSettings cs;
  cs.alpha = 1 - squeeze::kIntervalConfidence;
  const Comparison c = analyze(runs, s.thresholds, cs, s.declared);
  const MetricComparison* m = nullptr;
  for (const auto& w : c.workloads)
    for (const auto& mc : w.metrics)
      if (mc.metric == s.q.metric) m = &mc;
  std::optional<squeeze::Speed> speed;
  if (m) speed = squeeze::judge_speed(*m, last);
  // Every limited run ok with no limit event (so no OOM kill, no failure).
  const bool never_reached = squeeze::limit_never_reached(runs);
  std::string why;
  bool decided = true, on_threshold = false;
  if (oom) why = fmt::format("{} of its limited runs were OOM-killed", oom);
  else if (failed[1]) why = fmt::format("{} of its limited runs failed", failed[1]);
  else if (failed[0]) why = fmt::format("{} of its unlimited runs failed: nothing to compare with", failed[0]);
  else if (never_reached) why.clear();  // kept: the limit never bit
  else if (!m) why = fmt::format("its runs have no {}", s.q.metric);
  else {
    why = speed->why;
    decided = speed->decided;
    on_threshold = speed->on_threshold;
  }
  return {{"limit_bytes", limit}, {"keeps", why.empty()}, {"decided", decided}, {"on_threshold", on_threshold},
          {"why", why}, {"rounds", rounds},
          {"confirmed", confirmed}, {"never_reached", never_reached},
          {"figures", probe_figures(runs, s.q.metric, m, speed ? &*speed : nullptr)}};
}

std::vector<squeeze::Probe> probes_of(const Json& entry) {
  std::vector<squeeze::Probe> out;
  for (const auto& p : entry.value("probes", Json::array()))
    out.push_back({p.value("limit_bytes", uint64_t(0)), p.value("keeps", false), p.value("confirmed", false),
                   p.value("rounds", 0), p.value("why", std::string()), p.value("on_threshold", false)});
  return out;
}

// The probe at `limit` replaced, or added.
void put_probe(Json& entry, Json probe) {
  Json& probes = entry["probes"];
  if (!probes.is_array()) probes = Json::array();
  for (auto& p : probes)
    if (p.value("limit_bytes", uint64_t(0)) == probe["limit_bytes"].get<uint64_t>()) {
      p = std::move(probe);
      return;
    }
  probes.push_back(std::move(probe));
}

std::string limit_mb(uint64_t bytes) { return display_number(double(bytes) / 1024, display_unit("KiB")); }

// The unlimited cgroup peak the search starts from: one unlimited run's, in
// whole MiB. False when stopped or the run gave none (entry["why_done"] says).
bool find_start(const Options& o, Squeeze& s, const Job& job, const AllocatorSpec& a, Json& entry, int& signal) {
  auto runs = probe_runs(o, s, job, a, 0, 1, signal);
  if (!runs) return false;
  const auto peak = role_median(*runs, "", "cgroup_peak_kb");
  if (!peak) {
    entry["done"] = true;
    entry["why_done"] = "the unlimited run " + (runs->empty() ? std::string("did not run") :
        runs->front().status != Status::Ok ? std::string("failed") : "has no cgroup peak (" + metric_reason(runs->front(), "cgroup_peak_kb") + ")");
    return true;
  }
  entry["start_bytes"] = (uint64_t(*peak) * 1024 + (1 << 20) - 1) >> 20 << 20;
  entry["reference_runs"] = runs_path(s, job, a, 0);
  return true;
}

// The rounds a probe at `limit` has had (0: none tried).
int rounds_of(const std::vector<squeeze::Probe>& probes, uint64_t limit) {
  for (const auto& p : probes)
    if (p.limit == limit) return p.rounds;
  return 0;
}

// One probe at `limit`: --runs rounds (a confirmation: --confirm-rounds more
// than the `had`), then kMoreRounds more at a time while its interval cannot
// tell, up to --max-rounds (a confirmation: --confirm-rounds past it).
// nullopt when stopped (signal set).
std::optional<Json> probe_until_decided(const Options& o, const Squeeze& s, const Job& job, const AllocatorSpec& a,
                                        uint64_t limit, int had, int& signal) {
  const bool confirm = had > 0;
  int rounds = confirm ? had + s.q.confirm_rounds : s.q.rounds;
  const int cap = std::max(rounds, s.q.max_rounds + (confirm ? s.q.confirm_rounds : 0));
  for (;;) {
    auto runs = probe_runs(o, s, job, a, limit, rounds, signal);
    if (!runs) return std::nullopt;
    const bool last = rounds + kMoreRounds > cap;
    Json p = judge_probe(s, *runs, limit, rounds, confirm, last);
    if (p["decided"].get<bool>()) return p;
    fmt::print(stderr, "{}: {} {}: {} MB: {}; {} more rounds\n", kWhoSqueeze, job.workload.name, a.label,
               limit_mb(limit), p["why"].get<std::string>(), kMoreRounds);
    rounds += kMoreRounds;
  }
}

// One job's search under one allocator, resumed from `entry`; false when stopped (signal set).
bool search(const Options& o, Squeeze& s, const Job& job, const AllocatorSpec& a, Json& entry, int& signal) {
  const auto t0 = std::chrono::steady_clock::now();
  auto add_time = [&] {
    entry["seconds"] = entry.value("seconds", 0.0) + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  if (!entry.contains("start_bytes") && !entry.value("done", false) && !find_start(o, s, job, a, entry, signal)) return false;
  while (!entry.value("done", false)) {
    const uint64_t start = entry["start_bytes"].get<uint64_t>();
    const auto probes = probes_of(entry);
    const auto step = squeeze::next_step(probes, start, kFloorBytes, s.q.settings);
    if (step.what == squeeze::Step::What::Done) {
      entry["done"] = true;
      entry["why_done"] = step.why_done;
      break;
    }
    const bool confirm = step.what == squeeze::Step::What::Confirm;
    const auto t_probe = std::chrono::steady_clock::now();
    auto p = probe_until_decided(o, s, job, a, step.limit, confirm ? rounds_of(probes, step.limit) : 0, signal);
    if (!p) {
      add_time();
      return false;
    }
    (*p)["runs"] = runs_path(s, job, a, step.limit);
    (*p)["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_probe).count();
    const char* kept = (*p)["never_reached"].get<bool>() ? "keeps its speed (never reached: no limit event in its runs)"
                                                         : "keeps its speed";
    fmt::print(stderr, "{}: {} {}: {} MB {}{}\n", kWhoSqueeze, job.workload.name, a.label, limit_mb(step.limit),
               confirm ? "confirmed: " : "", (*p)["keeps"].get<bool>() ? kept : (*p)["why"].get<std::string>());
    put_probe(entry, std::move(*p));
    save_squeeze(s, false);
  }
  add_time();
  return true;
}


// The median over the probes of an unlimited figure (every probe ran unlimited rounds).
std::optional<double> unlimited_median(const Json& entry, const char* key) {
  std::vector<double> v;
  for (const auto& p : entry.value("probes", Json::array())) {
    const Json f = p.value("figures", Json::object());
    if (f.contains(key) && f.at(key).is_number()) v.push_back(f.at(key).get<double>());
  }
  if (v.empty()) return std::nullopt;
  return stats::median(v);
}

// The least and the most change of the figure of merit within rounds (its
// size: worse either way) at the limits on the threshold in the band; null
// without a band.
Json band_change(const Json& entry, const squeeze::Bracket& b) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& p : entry.value("probes", Json::array())) {
    const uint64_t limit = p.value("limit_bytes", uint64_t(0));
    const Json change = p.value("figures", Json::object()).value("fom_change_within_rounds", Json());
    if (!p.value("on_threshold", false) || limit < b.band_lo || limit > b.band_hi || !change.is_number()) continue;
    lo = std::min(lo, std::fabs(change.get<double>()));
    hi = std::max(hi, std::fabs(change.get<double>()));
  }
  return lo <= hi ? Json::array({lo, hi}) : Json(nullptr);
}

// What the search found, into its entry: the limit, its bracket and width,
// the limit as a share of the unlimited peaks, the figures at the limit.
void conclude(Json& entry) {
  if (!entry.contains("start_bytes")) return;
  std::vector<squeeze::Probe> probes = probes_of(entry);
  const auto b = squeeze::bracket_of(probes, entry["start_bytes"].get<uint64_t>());
  entry["probes_used"] = probes.size();
  // A limit is found only where one was tried and kept the speed: never the
  // untried start a search that ran out of probes still has as its top.
  if (b.hi == 0 || !b.hi_probe) return;
  entry["limit_bytes"] = b.hi;
  entry["bracket_bytes"] = {b.lo, b.hi};
  entry["width"] = b.lo ? Json(double(b.hi - b.lo) / double(b.hi)) : Json(nullptr);
  entry["on_threshold_bytes"] = b.band_lo ? Json::array({b.band_lo, b.band_hi}) : Json(nullptr);
  entry["on_threshold_said"] = squeeze::band_said(b);
  entry["on_threshold_change"] = band_change(entry, b);
  const auto rss = unlimited_median(entry, "unlimited_peak_rss_kb"), cg = unlimited_median(entry, "unlimited_cgroup_peak_kb");
  entry["unlimited_peak_rss_kb"] = number_or_null(rss);
  entry["unlimited_cgroup_peak_kb"] = number_or_null(cg);
  entry["share_of_peak_rss"] = rss ? Json(double(b.hi) / (*rss * 1024)) : Json(nullptr);
  entry["share_of_cgroup_peak"] = cg ? Json(double(b.hi) / (*cg * 1024)) : Json(nullptr);
  for (const auto& p : entry.value("probes", Json::array()))
    if (p.value("limit_bytes", uint64_t(0)) == b.hi) {
      entry["at_limit"] = p.value("figures", Json::object());
      entry["limit_never_reached"] = p.value("never_reached", false);
    }
}

std::string squeeze_cell(const Json& v, const char* unit) {
  return v.is_number() ? display_number(v.get<double>(), display_unit(unit)) : "-";
}

std::string percent(const Json& v) { return v.is_number() ? fmt::format("{:.0f}%", v.get<double>() * 100) : "-"; }

// The table of every search: one line per workload and allocator.
std::string table(const Squeeze& s) {
  std::string out = fmt::format("{:<18} {:<10} {:>9} {:>17} {:>6} {:>8} {:>8} {:>9} {:>12} {:>12} {:>7} {:>7}\n",
                                "workload", "allocator", "limit MB", "bracket MB", "width", "of RSS", "of cgrp",
                                "stall ms", "FoM limited", "FoM unlim.", "probes", "time s");
  out += std::string(out.size() - 1, '-') + "\n";
  for (const auto& e : s.results) {
    const Json at = e.value("at_limit", Json::object());
    const Json br = e.value("bracket_bytes", Json());
    const std::string unit = s.q.json.value("metric_unit", "ms");
    out += fmt::format("{:<18} {:<10} {:>9} {:>17} {:>6} {:>8} {:>8} {:>9} {:>12} {:>12} {:>7} {:>7.0f}\n",
                       e.value("workload", ""), e.value("allocator", ""),
                       e.contains("limit_bytes") ? limit_mb(e["limit_bytes"].get<uint64_t>()) +
                                                       (e.value("limit_never_reached", false) ? "*" : "") : "-",
                       br.is_array() ? fmt::format("{}-{}", limit_mb(br[0].get<uint64_t>()), limit_mb(br[1].get<uint64_t>())) : "-",
                       percent(e.value("width", Json())), percent(e.value("share_of_peak_rss", Json())),
                       percent(e.value("share_of_cgroup_peak", Json())), squeeze_cell(at.value("stall_ms", Json()), "ms"),
                       squeeze_cell(at.value("fom_limited", Json()), unit.c_str()), squeeze_cell(at.value("fom_unlimited", Json()), unit.c_str()),
                       e.value("probes_used", 0), e.value("seconds", 0.0));
    const std::string why_done = e.value("why_done", std::string());
    std::string said = why_done.empty() ? e.value("on_threshold_said", std::string()) : why_done;
    const Json band = e.value("on_threshold_change", Json());
    if (!why_done.empty() && band.is_array())
      said += fmt::format("; its cost there is {:.1f} to {:.1f}%: a --threshold below that asks where the cost begins",
                          band[0].get<double>() * 100, band[1].get<double>() * 100);
    if (!said.empty()) out += fmt::format("  {} {}: {}\n", e.value("workload", ""), e.value("allocator", ""), said);
  }
  out += fmt::format("limit: the smallest --memory-limit tried that was shown to keep the speed ({} within {:g}% of "
                     "unlimited, 90% interval within rounds; * never reached: no limited run had a limit event, "
                     "so it kept the speed whatever its FoM says); "
                     "bracket: the largest shown not to (slower, OOM-killed or failed), to it, holding any limit whose "
                     "cost sat on the threshold; of RSS / of cgrp: the limit over the unlimited peak RSS / cgroup peak; stall "
                     "and FoM: medians of the limited runs at the limit; {}\n", s.q.metric,
                     s.q.json.value("threshold", 0.0) * 100, kUnitConvention);
  return out;
}


// Every allocator -a names, or every available built-in.
bool allocators_asked(const Options& o, Squeeze& s, std::string& error) {
  if (o.allocators.empty()) s.allocators = available_builtins(default_allocator_context(s.layout.libdir));
  for (const auto& text : o.allocators) {
    auto spec = resolve_allocator(s.layout, text, error);
    if (!spec) return false;
    if (std::any_of(s.allocators.begin(), s.allocators.end(), [&](const AllocatorSpec& a) { return a.label == spec->label; })) {
      error = "allocator '" + text + "' is given twice";
      return false;
    }
    s.allocators.push_back(*spec);
  }
  return true;
}

// "" when a run can be held to a limit by a memory cgroup here, else why not.
std::string limit_why_not() {
  if (cgroup::v2_memory_why_not().empty()) return "";
  const std::string v1 = cgroup::own_dir("memory");
  if (!v1.empty() && access(v1.c_str(), W_OK) == 0) return "";
  return "no memory cgroup can be made here (" + cgroup::v2_memory_why_not() +
         (v1.empty() ? "; no v1 memory hierarchy" : "; " + v1 + " is not writable") +
         "): a squeeze needs one (RLIMIT_AS limits address space, not memory); docs/memory-needed.md says how to "
         "delegate one";
}

// What is asked, checked: the jobs, allocators, figure of merit, rule and
// settings; "" or the error.
std::string ask(const Options& o, Squeeze& s) {
  std::string error;
  if (!o.memory_limit.empty() || !o.memory_high.empty())
    return "--memory-limit and --memory-high are what squeeze searches: leave them out";
  if (auto why = limit_why_not(); !why.empty()) return why;
  auto jobs = jobs_from_options(s.layout, o, error);
  if (!jobs) return error;
  s.jobs = *jobs;
  s.declared = declared_by_jobs(s.jobs);
  if (!allocators_asked(o, s, error)) return error;
  auto metric = figure_of_merit(o, s.jobs, s.declared, error);
  if (!metric) return error;
  auto thresholds = load_thresholds(thresholds_file(s.layout, o), error);
  if (!thresholds) return error;
  s.thresholds = *thresholds;
  const DeclaredMetric* d = find_declared(s.declared, s.jobs.front().workload.name, *metric);
  MetricRule rule = s.thresholds.rule_for(*metric, d ? d->better : "", s.jobs.front().workload.name);
  if (rule.direction == compare::Direction::None)
    return "--metric " + *metric + " has no direction (neither lower nor higher is better): it cannot say a run slowed";
  if (o.squeeze.threshold) {  // ahead of every pattern: the first match wins
    rule.threshold = *o.squeeze.threshold / 100;
    s.thresholds.rules.insert(s.thresholds.rules.begin(), {*metric, rule});
  }
  Execution probe;
  if (!apply_run_options(o, probe, error)) return error;
  s.q.metric = *metric;
  s.q.settings = {o.squeeze.width, o.squeeze.max_probes};
  s.q.rounds = o.runs;
  s.q.confirm_rounds = o.squeeze.confirm_rounds;
  s.q.max_rounds = o.squeeze.max_rounds;
  Json jobs_json = Json::array(), labels = Json::array();
  for (const auto& j : s.jobs) jobs_json.push_back(Json{{"workload", j.workload.name}, {"params", j.params}});
  for (const auto& a : s.allocators) labels.push_back(a.label);
  s.q.json = {{"jobs", jobs_json}, {"allocators", labels}, {"metric", *metric},
              {"metric_unit", metric_info(*metric, s.jobs.front().workload.name, s.declared).unit},
              {"metric_display_unit", display_unit(metric_info(*metric, s.jobs.front().workload.name, s.declared).unit).unit},
              {"metric_display_scale", display_unit(metric_info(*metric, s.jobs.front().workload.name, s.declared).unit).scale},
              {"threshold", rule.threshold}, {"rounds", s.q.rounds}, {"confirm_rounds", s.q.confirm_rounds}, {"max_rounds", s.q.max_rounds},
              {"width", o.squeeze.width},
              {"max_probes", o.squeeze.max_probes}};
  if (!o.plot.empty()) {
    const auto ext = fs::path(o.plot).extension().string();
    if (ext != ".png" && ext != ".svg") return "--plot " + o.plot + ": the plot must end in .png or .svg";
    if (auto err = output_file::check_file(o.plot); !err.empty()) return "--plot: " + err;
  }
  return "";
}

// The JSON (-o, else a new results/squeeze-NAME-TIME.json): a squeeze of the
// same question there is resumed; any other file is refused. "" or the error.
std::string open_squeeze_state(const Options& o, Squeeze& s) {
  std::string error;
  const std::string name = !o.suite.empty() ? "suite-" + o.suite : s.jobs.front().workload.name;
  if (!o.out.empty()) {
    s.path = o.out;
    if (auto e = output_file::check_file(s.path); !e.empty()) return "-o: " + e;
  } else {
    auto reserved = reserve_new_outputs("results/squeeze-" + name, {".json"}, error);
    if (reserved.empty()) return error;
    s.path = reserved[0];
  }
  s.dir = s.path.substr(0, s.path.size() - (s.path.ends_with(".json") ? 5 : 0)) + "-runs";
  s.seed = o.seed.value_or(std::random_device{}());
  if (fs::exists(s.path) && fs::file_size(s.path) > 0) {
    auto old = read_json_file(s.path, kFileLimits, error);
    if (!old || !old->is_object() || old->value("schema", Json()) != kSchema)
      return s.path + " is not a squeeze's JSON" + (old ? "" : " (" + error + ")") + ": give another -o";
    if (old->value("question", Json()) != s.q.json)
      return s.path + " is the squeeze of another question (" + json_text(old->value("question", Json())) + "); give another -o";
    s.seed = old->value("seed", s.seed);
    s.results = old->value("results", Json::array());
    fmt::print(stderr, "{}: resuming {}\n", kWhoSqueeze, s.path);
  }
  std::error_code ec;
  fs::create_directories(s.dir, ec);
  if (ec) return "cannot make " + s.dir + ": " + ec.message();
  return "";
}

Json& entry_for(Squeeze& s, const Job& job, const AllocatorSpec& a) {
  for (auto& e : s.results)
    if (e.value("workload", "") == job.workload.name && e.value("allocator", "") == a.label) return e;
  s.results.push_back(Json{{"workload", job.workload.name}, {"params", job.params}, {"allocator", a.label}});
  return s.results.back();
}

// Draws the JSON with `harness plot squeeze` (scripts/plot_squeeze.py); false when it cannot.
bool draw_squeeze_plot(const Squeeze& s, const std::string& plot) {
  // The running binary itself: the path it was started from may hold another
  // build by now, or none, after a squeeze of an hour.
  auto c = run_capture({"/proc/self/exe", "plot", "squeeze", s.path, "-o", plot}, 300);
  if (c.exit_code != 0) {
    fmt::print(stderr, "{}: no plot: {}{}", kWhoSqueeze, c.out, c.err);
    return false;
  }
  fmt::print("plot: {}\n", plot);
  return true;
}

}  // namespace

int squeeze_command(const Options& o) {
  Squeeze s;
  s.layout = find_layout();
  if (auto e = ask(o, s); !e.empty()) return bad_input(kWhoSqueeze, e);
  if (auto e = open_squeeze_state(o, s); !e.empty()) return bad_input(kWhoSqueeze, e);
  for (const auto& job : s.jobs)
    for (const auto& a : s.allocators) {
      Json& entry = entry_for(s, job, a);
      int signal = 0;
      const bool ended = search(o, s, job, a, entry, signal);
      conclude(entry);
      save_squeeze(s, false);
      if (!ended) {
        fmt::print("{}", table(s));
        fmt::print(stderr, "{}: stopped by a signal; what was measured is in {}: to go on, run the same command with -o {}\n",
                   kWhoSqueeze, s.path, s.path);
        return 128 + signal;
      }
    }
  save_squeeze(s, true);
  fmt::print("{}squeeze: {}\n", table(s), s.path);
  if (!o.plot.empty() && !draw_squeeze_plot(s, o.plot)) return 1;
  const bool all_found = std::all_of(s.results.begin(), s.results.end(), [](const Json& e) { return e.contains("limit_bytes"); });
  return all_found ? 0 : 1;
}

}  // namespace mh
