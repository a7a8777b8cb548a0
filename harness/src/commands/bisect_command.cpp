// The bisect command: the commit of a pin's repository that made a regression.
// Each step builds a commit and compares it with the good revision the way
// `harness compare` does (rounds of good, the commit, good again, shuffled);
// every step goes to a state file, so an interrupted bisect resumes.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "commands/commands.h"
#include "compare/compare.h"
#include "compare/compare_report.h"
#include "report/context.h"
#include "report/report_json.h"
#include "commands/session.h"

namespace mh {

namespace {

namespace fs = std::filesystem;

constexpr const char* kWho = "harness bisect";
constexpr const char* kStateSchema = "memharness.bisect/1";

int bad_input(const std::string& message) {
  fmt::print(stderr, "{}: {}\n", kWho, message);
  return 2;
}

// One tested commit: bad (a deciding metric regressed against good), good, or
// skip (it did not build).
struct Step {
  std::string commit, outcome;
  std::vector<std::string> regressed;  // "workload: metric"
  std::string comparison, table, note;
};

Json step_json(const Step& s) {
  return Json{{"commit", s.commit},        {"outcome", s.outcome}, {"regressed", s.regressed},
              {"comparison", s.comparison}, {"table", s.table},     {"note", s.note}};
}

Step step_from(const Json& j) {
  Step s;
  s.commit = j.value("commit", "");
  s.outcome = j.value("outcome", "");
  for (const auto& r : j.value("regressed", Json::array())) s.regressed.push_back(r.get<std::string>());
  s.comparison = j.value("comparison", "");
  s.table = j.value("table", "");
  s.note = j.value("note", "");
  return s;
}

struct Bisect {
  Layout layout;
  RepoPin pin;
  std::string repo, good, bad;  // full commits
  std::vector<Job> jobs;
  Thresholds thresholds;
  DeclaredMetrics declared;
  std::optional<AllocatorSpec> good_spec;
  uint64_t seed = 0;
  std::string dir;  // the state file's folder: each step's comparison and runs
  Json state;
  std::vector<Step> steps;
  std::set<std::string> deciding;  // "workload: metric" that decide; empty: any regression
};

std::string short_sha(const std::string& c) { return c.substr(0, 12); }

void save(const Bisect& b, const std::string& path) {
  Json s = b.state;
  Json steps = Json::array();
  for (const auto& st : b.steps) steps.push_back(step_json(st));
  s["steps"] = steps;
  s["deciding"] = std::vector<std::string>(b.deciding.begin(), b.deciding.end());
  if (auto e = write_atomic(path, dump_canonical(s)); !e.empty()) fmt::print(stderr, "{}: {}\n", kWho, e);
}

// Builds `commit` and compares it against good. nullopt when the harness was
// asked to stop (signal in stop_signal); a step with outcome "skip" when the
// commit does not build.
std::optional<Step> run_step(const Options& o, Bisect& b, const std::string& commit, const std::string& name,
                             int& stop_signal) {
  Step step;
  step.commit = commit;
  std::string error;
  auto cand = resolve_allocator(b.layout, b.pin.name + "@" + commit, error);
  if (!cand) {
    step.outcome = "skip";
    step.note = error;
    return step;
  }
  if (!b.good_spec) {
    b.good_spec = resolve_allocator(b.layout, b.pin.name + "@" + b.good, error);
    if (!b.good_spec) {
      step.outcome = "skip";
      step.note = "the good revision does not build: " + error;
      return step;
    }
  }
  Execution e;
  e.jobs = b.jobs;
  e.arms = {{*b.good_spec, kRoleBaseline}, {*cand, kRoleCandidate}, {*b.good_spec, kRoleBaselineAgain}};
  if (!apply_run_options(o, e, error)) return std::nullopt;
  e.plan = interleave(e.jobs.size(), e.arms.size(), o.runs, b.seed);
  e.out = (fs::path(b.dir) / (name + "-runs.json")).string();
  e.context = make_context(o.argv);
  e.context["bisect"] = Json{{"pin", b.pin.name}, {"good", b.good}, {"commit", commit}};
  std::vector<RunRecord> runs;
  auto outcome = execute(e, runs);
  if (outcome.stop_signal) {
    stop_signal = outcome.stop_signal;
    return std::nullopt;
  }
  CompareSettings settings;
  settings.alpha = o.alpha;
  Comparison c = analyze(runs, b.thresholds, settings, b.declared);
  c.baseline = b.pin.name + "@" + short_sha(b.good);
  c.candidate = b.pin.name + "@" + short_sha(commit);
  step.comparison = (fs::path(b.dir) / (name + ".json")).string();
  Json cj = comparison_to_json(c, e.context);
  if (auto err = write_atomic(step.comparison, dump_canonical(cj)); !err.empty()) fmt::print(stderr, "{}: {}\n", kWho, err);
  step.table = comparison_table(c);
  for (const auto& w : c.workloads)
    for (const auto& m : w.metrics)
      if (m.verdict == compare::Verdict::Regression) step.regressed.push_back(w.workload + ": " + m.metric);
  bool bad = false;
  for (const auto& r : step.regressed) bad = bad || b.deciding.empty() || b.deciding.count(r);
  step.outcome = bad ? "bad" : "good";
  if (c.failed_runs > 0) step.note = fmt::format("{} runs failed and were left out", c.failed_runs);
  return step;
}

const Step* find_step(const Bisect& b, const std::string& commit) {
  for (const auto& s : b.steps)
    if (s.commit == commit) return &s;
  return nullptr;
}

// The comparison rules: with --metric, only those metrics are tested (the
// others informational), so that a few rounds can reach alpha.
std::optional<Thresholds> deciding_rules(const Options& o, const Thresholds& all, const std::vector<Job>& jobs,
                                         const DeclaredMetrics& declared, std::string& error) {
  if (o.metrics.empty()) return all;
  Thresholds t;
  t.fallback = MetricRule{compare::Direction::None, all.fallback.threshold, all.fallback.min_delta};
  for (const auto& m : o.metrics) {
    std::string better;
    for (const auto& job : jobs)
      if (const DeclaredMetric* d = find_declared(declared, job.workload.name, m)) better = d->better;
    MetricRule r = all.rule_for(m, better);
    if (r.direction == compare::Direction::None) {
      error = "--metric " + m + ": it has no direction (informational, or not a metric of these workloads), so it "
              "is never a regression";
      return std::nullopt;
    }
    t.rules.push_back({m, r});
  }
  t.rules.push_back({"*", t.fallback});
  return t;
}

}  // namespace

int bisect_command(const Options& o) {
  Bisect b;
  b.layout = find_layout();
  std::string error;
  auto pin = find_repo_pin(b.layout, o.pin, error);
  if (!pin) return bad_input("--pin " + o.pin + ": " + error);
  b.pin = *pin;
  const PinPaths paths = pin_paths(b.layout);
  auto repo = pin_repository(b.pin, paths, o.bad, error);
  if (!repo) return bad_input(error);
  b.repo = *repo;
  auto good = resolve_commit(b.repo, o.good, error);
  if (!good) return bad_input("--good: " + error);
  auto bad = resolve_commit(b.repo, o.bad, error);
  if (!bad) return bad_input("--bad: " + error);
  b.good = *good;
  b.bad = *bad;
  if (b.good == b.bad) return bad_input("--good and --bad are the same commit " + short_sha(b.good));
  auto commits = commits_between(b.repo, b.good, b.bad, !o.all_parents, error);
  if (!commits) return bad_input(error);
  if (commits->empty() || commits->back() != b.bad)
    return bad_input("no first-parent line leads from " + short_sha(b.good) + " to " + short_sha(b.bad) +
                     " (try --all-parents)");
  auto jobs = resolve_jobs(b.layout, o.workload, o.workload_args, o.suite, o.shard, error);
  if (!jobs) return bad_input(error);
  b.jobs = *jobs;
  b.declared = declared_by_jobs(b.jobs);
  const std::string thresholds_path = o.thresholds.empty() ? b.layout.share + "/thresholds.json" : o.thresholds;
  auto all = load_thresholds(thresholds_path, error);
  if (!all) return bad_input(error);
  auto rules = deciding_rules(o, *all, b.jobs, b.declared, error);
  if (!rules) return bad_input(error);
  b.thresholds = *rules;
  {
    Execution probe;  // the run options are checked before anything is built
    if (!apply_run_options(o, probe, error)) return bad_input(error);
  }

  // The state: a bisect of the same question resumes; another one is refused.
  const std::string state_path =
      !o.state.empty() ? o.state
                       : fmt::format("results/bisect-{}-{}-{}/state.json", b.pin.name, short_sha(b.good), short_sha(b.bad));
  b.dir = fs::path(state_path).has_parent_path() ? fs::path(state_path).parent_path().string() : ".";
  if (auto e = check_writable(state_path); !e.empty()) return bad_input("--state: " + e);
  Json args = Json::array();
  for (const auto& job : b.jobs) args.push_back(Json{{"workload", job.workload.name}, {"args", job.args}});
  const Json question = {{"pin", b.pin.name}, {"good", b.good},         {"bad", b.bad},
                         {"jobs", args},      {"metrics", o.metrics},   {"runs", o.runs},
                         {"first_parent", !o.all_parents}};
  b.seed = o.seed.value_or(std::random_device{}());
  if (std::ifstream in(state_path); in) {
    Json old = Json::parse(in, nullptr, false);
    if (old.is_discarded() || old.value("schema", "") != kStateSchema)
      return bad_input(state_path + " is not a bisect state file; give another --state");
    if (old.value("question", Json()) != question)
      return bad_input(state_path + " is the state of another bisect (" + old.value("question", Json()).dump() +
                       "); give another --state, or remove it");
    if (o.seed && old.value("seed", uint64_t(0)) != *o.seed)
      return bad_input(fmt::format("{} was made with --seed {}", state_path, old.value("seed", uint64_t(0))));
    b.seed = old.value("seed", b.seed);
    for (const auto& s : old.value("steps", Json::array())) b.steps.push_back(step_from(s));
    for (const auto& d : old.value("deciding", Json::array())) b.deciding.insert(d.get<std::string>());
    fmt::print(stderr, "{}: resuming {}: {} step{} kept\n", kWho, state_path, b.steps.size(),
               b.steps.size() == 1 ? "" : "s");
  }
  b.state = Json{{"schema", kStateSchema}, {"question", question}, {"seed", b.seed}, {"commits", *commits}};
  fmt::print(stderr, "{}: {} commits from {} (good) to {} (bad) in {}; state: {}\n", kWho, commits->size(),
             short_sha(b.good), short_sha(b.bad), b.repo, state_path);

  auto stopped = [&](int signal) {
    save(b, state_path);
    fmt::print(stderr, "{}: stopped by a signal; to go on, run the same command again (state: {})\n", kWho,
               state_path);
    return 128 + signal;
  };
  auto step_at = [&](const std::string& commit, const std::string& name, int& signal) -> std::optional<Step> {
    if (const Step* s = find_step(b, commit)) return *s;
    auto s = run_step(o, b, commit, name, signal);
    if (s) {
      b.steps.push_back(*s);
      save(b, state_path);
    }
    return s;
  };

  // Good and bad must really differ: what regresses between them decides.
  int signal = 0;
  auto check = step_at(b.bad, "check-" + short_sha(b.bad), signal);
  if (!check) return signal ? stopped(signal) : bad_input("the comparison of good and bad could not be made");
  if (check->outcome == "skip") return bad_input("the bad revision does not build: " + check->note);
  fmt::print("{}", check->table);
  if (check->outcome != "bad")
    return bad_input(fmt::format("good ({}) and bad ({}) do not differ{}: nothing to bisect", short_sha(b.good),
                                 short_sha(b.bad),
                                 o.metrics.empty() ? "" : " in " + Json(o.metrics).dump()));
  if (b.deciding.empty()) b.deciding.insert(check->regressed.begin(), check->regressed.end());
  save(b, state_path);
  std::string deciding;
  for (const auto& d : b.deciding) deciding += (deciding.empty() ? "" : ", ") + d;
  fmt::print(stderr, "{}: deciding: {}\n", kWho, deciding);

  // The walk: lo is the last commit known good (-1: good itself), hi the first
  // known bad; skipped commits are passed over, as git bisect skip does.
  const auto& list = *commits;
  int lo = -1, hi = int(list.size()) - 1;
  std::set<int> skipped;
  for (int n = 1;; ++n) {
    std::vector<int> open;
    for (int i = lo + 1; i < hi; ++i)
      if (!skipped.count(i)) open.push_back(i);
    if (open.empty()) break;
    const int middle = (lo + hi) / 2;
    int pick = open.front();
    for (int i : open)
      if (std::abs(i - middle) < std::abs(pick - middle)) pick = i;
    auto s = step_at(list[size_t(pick)], fmt::format("step-{}", short_sha(list[size_t(pick)])), signal);
    if (!s) return signal ? stopped(signal) : 1;
    const std::string subject = commit_subject(b.repo, s->commit);
    fmt::print(stderr, "{}: step {}: {} {}: {}{}\n", kWho, n, short_sha(s->commit), subject, s->outcome,
               s->outcome == "skip" ? " (" + s->note.substr(0, 300) + ")" : "");
    if (s->outcome == "skip") skipped.insert(pick);
    else if (s->outcome == "bad") hi = pick;
    else lo = pick;
  }

  const std::string first = list[size_t(hi)];
  std::vector<std::string> maybe;
  for (int i = lo + 1; i < hi; ++i) maybe.push_back(short_sha(list[size_t(i)]));
  const Step* at = find_step(b, first);
  b.state["first_bad"] = first;
  b.state["could_also_be"] = maybe;
  save(b, state_path);
  if (at) fmt::print("\n{}", at->table);
  if (maybe.empty()) {
    fmt::print("first bad commit: {} {}\n", first, commit_subject(b.repo, first));
  } else {
    std::string names;
    for (const auto& m : maybe) names += " " + m;
    fmt::print("first bad commit: {} {}, or one of the commits before it that did not build:{}\n", first,
               commit_subject(b.repo, first), names);
  }
  fmt::print("state: {}\n", state_path);
  return 0;
}

}  // namespace mh
