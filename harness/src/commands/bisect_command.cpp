// The bisect command: the commit of a pin's repository that made a regression.
// Each step builds a commit and compares it with the good revision the way
// `harness compare` does (rounds of good, the commit, good again, shuffled);
// every step goes to a state file, so an interrupted bisect resumes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "commands/commands.h"
#include "commands/execute.h"
#include "commands/from_options.h"
#include "commands/looks.h"
#include "commands/resolve.h"
#include "compare/compare.h"
#include "compare/compare_report.h"
#include "compare/sequential.h"
#include "report/context.h"
#include "report/report_json.h"
#include "sys/json_read.h"
#include "sys/output_file.h"

namespace mh {

namespace {

namespace fs = std::filesystem;

constexpr const char* kWhoBisect = "harness bisect";
constexpr const char* kStateSchema = "memharness.bisect/1";

// One tested commit: bad (a deciding metric regressed against good), good, or
// skip (it did not build).
struct Step {
  std::string commit, outcome;
  std::vector<std::string> regressed;  // "workload: metric"
  std::string comparison, table, note;
};

Json bisect_step_json(const Step& s) {
  return Json{{"commit", s.commit},        {"outcome", s.outcome}, {"regressed", s.regressed},
              {"comparison", s.comparison}, {"table", s.table},     {"note", s.note}};
}

Step step_from(const JsonIn& j) {
  Step s;
  s.commit = j.string_or("commit", "");
  s.outcome = j.string_or("outcome", "");
  if (auto r = j.find("regressed")) r->each_element([&](const JsonIn& e) { s.regressed.push_back(e.string()); });
  s.comparison = j.string_or("comparison", "");
  s.table = j.string_or("table", "");
  s.note = j.string_or("note", "");
  return s;
}

struct Bisect {
  Layout layout;
  RepoPin pin;
  std::string repo, good, bad;       // full commits
  std::vector<std::string> commits;  // after good up to bad, oldest first
  std::vector<Job> jobs;
  Thresholds thresholds;
  DeclaredMetrics declared;
  std::optional<AllocatorSpec> good_spec;
  uint64_t seed = 0;
  std::string state_path;
  std::string dir;  // the state file's folder: each step's comparison and runs
  Json state;
  std::vector<Step> steps;
  std::set<std::string> deciding;  // "workload: metric" that decide; empty: any regression
};

std::string short_sha(const std::string& c) { return c.substr(0, 12); }

void save_bisect(const Bisect& b) {
  Json s = b.state;
  Json steps = Json::array();
  for (const auto& st : b.steps) steps.push_back(bisect_step_json(st));
  s["steps"] = steps;
  s["deciding"] = std::vector<std::string>(b.deciding.begin(), b.deciding.end());
  if (auto e = output_file::write_atomic(b.state_path, dump_canonical(s)); !e.empty()) fmt::print(stderr, "{}: {}\n", kWhoBisect, e);
}

// The candidate `commit` built, and good (once); nullopt with the step marked
// "skip" when either does not build.
std::optional<AllocatorSpec> build_revisions(Bisect& b, const std::string& commit, Step& step) {
  std::string error;
  auto cand = resolve_allocator(b.layout, b.pin.name + "@" + commit, error);
  if (!cand) {
    step.outcome = "skip";
    step.note = error;
    return std::nullopt;
  }
  if (!b.good_spec) {
    b.good_spec = resolve_allocator(b.layout, b.pin.name + "@" + b.good, error);
    if (!b.good_spec) {
      step.outcome = "skip";
      step.note = "the good revision does not build: " + error;
      return std::nullopt;
    }
  }
  return cand;
}

// A step's verdict from its comparison: bad when a deciding metric (any, when
// none decides yet) regressed.
void judge_step(const Bisect& b, const Comparison& c, Step& step) {
  step.table = comparison_table(c);
  for (const auto& w : c.workloads)
    for (const auto& m : w.metrics)
      if (m.verdict == compare::Verdict::Regression) step.regressed.push_back(w.workload + ": " + m.metric);
  bool bad = false;
  for (const auto& r : step.regressed) bad = bad || b.deciding.empty() || b.deciding.count(r);
  step.outcome = bad ? "bad" : "good";
  if (c.failed_runs > 0) step.note = fmt::format("{} runs failed and were left out", c.failed_runs);
  // --runs auto: a deciding metric still unknown at the last look is not a regression; say so.
  std::vector<std::string> unknown;
  for (const auto& w : c.workloads)
    for (const auto& m : w.metrics)
      if (m.decision == "unknown" && (b.deciding.empty() || b.deciding.count(w.workload + ": " + m.metric)))
        unknown.push_back(fmt::format("{}: {} ({} rounds)", w.workload, m.metric, m.rounds_needed));
  if (!unknown.empty())
    step.note += fmt::format("{}unknown after the last look, taken as no regression: {}", step.note.empty() ? "" : "; ",
                             fmt::join(unknown, ", "));
}

// Builds `commit` and compares it against good. nullopt when the harness was
// asked to stop (signal in stop_signal); a step with outcome "skip" when the
// commit does not build.
std::optional<Step> run_step(const Options& o, Bisect& b, const std::string& commit, const std::string& name,
                             int& stop_signal) {
  Step step;
  step.commit = commit;
  auto cand = build_revisions(b, commit, step);
  if (!cand) return step;
  std::string error;
  Execution e;
  e.jobs = b.jobs;
  e.arms = {{*b.good_spec, kRoleBaseline}, {*cand, kRoleCandidate}, {*b.good_spec, kRoleBaselineAgain}};
  if (!apply_run_options(o, e, error)) return std::nullopt;
  // --runs auto: a midpoint gets rounds until its deciding metrics are known (looks.h).
  const std::vector<PlannedRun> full =
      interleave(e.jobs.size(), e.arms.size(), o.runs_auto ? o.max_runs : o.runs, b.seed);
  e.plan = o.runs_auto ? rounds_up_to(full, o.runs) : full;
  e.out = (fs::path(b.dir) / (name + "-runs.json")).string();
  e.context = make_context(o.argv);
  e.context["bisect"] = Json{{"pin", b.pin.name}, {"good", b.good}, {"commit", commit}};
  std::vector<RunRecord> runs;
  auto outcome = execute(e, runs);
  if (o.runs_auto) run_looks({o.max_runs, o.alpha, o.quiet}, b.thresholds, b.declared, e, full, runs, outcome);
  if (outcome.stop_signal) {
    stop_signal = outcome.stop_signal;
    return std::nullopt;
  }
  CompareSettings settings;
  settings.alpha = o.alpha;
  Comparison c = analyze(runs, b.thresholds, settings, b.declared);
  c.baseline = b.pin.name + "@" + short_sha(b.good);
  c.candidate = b.pin.name + "@" + short_sha(commit);
  if (o.runs_auto) compare::apply_sequential(c, runs, compare::looks_up_to(o.max_runs), o.alpha);
  step.comparison = (fs::path(b.dir) / (name + ".json")).string();
  Json cj = comparison_to_json(c, e.context);
  if (auto err = output_file::write_atomic(step.comparison, dump_canonical(cj)); !err.empty()) fmt::print(stderr, "{}: {}\n", kWhoBisect, err);
  judge_step(b, c, step);
  return step;
}

const Step* find_step(const Bisect& b, const std::string& commit) {
  for (const auto& s : b.steps)
    if (s.commit == commit) return &s;
  return nullptr;
}

// The step at `commit`: from the state when it was made before, else made now
// and saved. nullopt when the harness was asked to stop (signal set).
std::optional<Step> step_at(const Options& o, Bisect& b, const std::string& commit, const std::string& name,
                            int& signal) {
  if (const Step* s = find_step(b, commit)) return *s;
  auto s = run_step(o, b, commit, name, signal);
  if (s) {
    b.steps.push_back(*s);
    save_bisect(b);
  }
  return s;
}

int stopped(const Bisect& b, int signal) {
  save_bisect(b);
  fmt::print(stderr, "{}: stopped by a signal; to go on, run the same command again (state: {})\n", kWhoBisect,
             b.state_path);
  return 128 + signal;
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
    // Its rule for the first workload where it has a direction ("micro:wall_ms" has none).
    MetricRule r = all.rule_for(m, better);
    for (const auto& job : jobs)
      if ((r = all.rule_for(m, better, job.workload.name)).direction != compare::Direction::None) break;
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

// The pin's repository, good and bad as full commits, and the commits from one
// to the other.
bool find_commits(const Options& o, Bisect& b, std::string& error) {
  auto pin = find_repo_pin(b.layout, o.pin, error);
  if (!pin) {
    error = "--pin " + o.pin + ": " + error;
    return false;
  }
  b.pin = *pin;
  auto repo = pin_repository(b.pin, pin_paths(b.layout), o.bad, error);
  if (!repo) return false;
  b.repo = *repo;
  auto good = resolve_commit(b.repo, o.good, error);
  if (!good) {
    error = "--good: " + error;
    return false;
  }
  auto bad = resolve_commit(b.repo, o.bad, error);
  if (!bad) {
    error = "--bad: " + error;
    return false;
  }
  b.good = *good;
  b.bad = *bad;
  if (b.good == b.bad) {
    error = "--good and --bad are the same commit " + short_sha(b.good);
    return false;
  }
  auto commits = commits_between(b.repo, b.good, b.bad, !o.all_parents, error);
  if (!commits) return false;
  if (commits->empty() || commits->back() != b.bad) {
    error = "no first-parent line leads from " + short_sha(b.good) + " to " + short_sha(b.bad) + " (try --all-parents)";
    return false;
  }
  b.commits = *commits;
  return true;
}

// What each step compares: the jobs, their declared metrics and the rules
// that decide; the run options checked before anything is built.
bool prepare_comparisons(const Options& o, Bisect& b, std::string& error) {
  auto jobs = resolve_jobs(b.layout, o.workload, o.workload_args, o.suite, o.shard, error);
  if (!jobs) return false;
  b.jobs = *jobs;
  b.declared = declared_by_jobs(b.jobs);
  auto all = load_thresholds(thresholds_file(b.layout, o), error);
  if (!all) return false;
  auto rules = deciding_rules(o, *all, b.jobs, b.declared, error);
  if (!rules) return false;
  b.thresholds = *rules;
  Execution probe;
  return apply_run_options(o, probe, error);
}

// The steps of an earlier bisect of the same question, from its state file;
// false when the file is of another bisect.
bool resume_state(const Options& o, Bisect& b, const Json& question, std::string& error) {
  auto old = read_json_file(b.state_path, kFileLimits, error);
  if (!old || !old->is_object() || old->value("schema", Json()) != kStateSchema) {
    error = b.state_path + " is not a bisect state file" + (old ? "" : " (" + error + ")") + "; give another --state";
    return false;
  }
  if (old->value("question", Json()) != question) {
    error = b.state_path + " is the state of another bisect (" + json_text(old->value("question", Json())) +
            "); give another --state, or remove it";
    return false;
  }
  return read_checked<bool>(
             [&] {
               const JsonIn state(*old, b.state_path);
               auto seed = state.find("seed");
               if (seed && !seed->json().is_number_unsigned()) seed->fail("an unsigned integer");
               const uint64_t stored = seed ? seed->json().get<uint64_t>() : b.seed;
               if (o.seed && stored != *o.seed)
                 throw JsonError(fmt::format("{} was made with --seed {}", b.state_path, stored));
               b.seed = stored;
               if (auto steps = state.find("steps")) steps->each_element([&](const JsonIn& st) { b.steps.push_back(step_from(st)); });
               if (auto d = state.find("deciding")) d->each_element([&](const JsonIn& c) { b.deciding.insert(c.string()); });
               fmt::print(stderr, "{}: resuming {}: {} step{} kept\n", kWhoBisect, b.state_path, b.steps.size(),
                          b.steps.size() == 1 ? "" : "s");
               return true;
             },
             error)
      .has_value();
}

// The state: a bisect of the same question resumes; another one is refused.
bool open_bisect_state(const Options& o, Bisect& b, std::string& error) {
  b.state_path = !o.state.empty() ? o.state
                                  : fmt::format("results/bisect-{}-{}-{}/state.json", b.pin.name, short_sha(b.good),
                                                short_sha(b.bad));
  b.dir = fs::path(b.state_path).has_parent_path() ? fs::path(b.state_path).parent_path().string() : ".";
  if (auto e = output_file::check_file(b.state_path); !e.empty()) {
    error = "--state: " + e;
    return false;
  }
  Json args = Json::array();
  for (const auto& job : b.jobs) args.push_back(Json{{"workload", job.workload.name}, {"args", job.args}});
  const Json question = {{"pin", b.pin.name}, {"good", b.good},         {"bad", b.bad},
                         {"jobs", args},      {"metrics", o.metrics},   {"runs", o.runs_auto ? Json("auto") : Json(o.runs)},
                         {"first_parent", !o.all_parents}};
  b.seed = o.seed.value_or(std::random_device{}());
  if (std::ifstream in(b.state_path); in)
    if (!resume_state(o, b, question, error)) return false;
  b.state = Json{{"schema", kStateSchema}, {"question", question}, {"seed", b.seed}, {"commits", b.commits}};
  fmt::print(stderr, "{}: {} commits from {} (good) to {} (bad) in {}; state: {}\n", kWhoBisect, b.commits.size(),
             short_sha(b.good), short_sha(b.bad), b.repo, b.state_path);
  return true;
}

// Good and bad must really differ: what regresses between them decides. The
// exit code when the bisect ends here, nullopt to go on.
std::optional<int> check_good_and_bad(const Options& o, Bisect& b) {
  int signal = 0;
  auto check = step_at(o, b, b.bad, "check-" + short_sha(b.bad), signal);
  if (!check) return signal ? stopped(b, signal) : bad_input(kWhoBisect, "the comparison of good and bad could not be made");
  if (check->outcome == "skip") return bad_input(kWhoBisect, "the bad revision does not build: " + check->note);
  fmt::print("{}", check->table);
  if (check->outcome != "bad")
    return bad_input(kWhoBisect, fmt::format("good ({}) and bad ({}) do not differ{}: nothing to bisect", short_sha(b.good),
                                       short_sha(b.bad), o.metrics.empty() ? "" : " in " + json_text(Json(o.metrics))));
  if (b.deciding.empty()) b.deciding.insert(check->regressed.begin(), check->regressed.end());
  save_bisect(b);
  std::string deciding;
  for (const auto& d : b.deciding) deciding += (deciding.empty() ? "" : ", ") + d;
  fmt::print(stderr, "{}: deciding: {}\n", kWhoBisect, deciding);
  return std::nullopt;
}

// Where the walk stands: commits[lo] is the last known good (-1: good
// itself), commits[hi] the first known bad; skipped commits are passed over,
// as git bisect skip does.
struct Range {
  int lo = -1, hi = 0;
  std::set<int> skipped;
};

// The commit to test next: of those strictly between lo and hi and not
// skipped, the one nearest the middle; -1 when none is left.
int next_pick(const Range& r) {
  const int middle = (r.lo + r.hi) / 2;
  int pick = -1;
  for (int i = r.lo + 1; i < r.hi; ++i)
    if (!r.skipped.count(i) && (pick < 0 || std::abs(i - middle) < std::abs(pick - middle))) pick = i;
  return pick;
}

// Halves the range until no commit is left between good and bad. nullopt
// when a step could not be made; exit_code then says how the bisect ends.
std::optional<Range> walk(const Options& o, Bisect& b, int& exit_code) {
  Range r{-1, int(b.commits.size()) - 1, {}};
  for (int n = 1;; ++n) {
    const int pick = next_pick(r);
    if (pick < 0) return r;
    const std::string& commit = b.commits[size_t(pick)];
    int signal = 0;
    auto s = step_at(o, b, commit, fmt::format("step-{}", short_sha(commit)), signal);
    if (!s) {
      exit_code = signal ? stopped(b, signal) : 1;
      return std::nullopt;
    }
    const std::string subject = escape::terminal(commit_subject(b.repo, s->commit));
    fmt::print(stderr, "{}: step {}: {} {}: {}{}\n", kWhoBisect, n, short_sha(s->commit), subject, s->outcome,
               s->outcome == "skip" ? " (" + escape::terminal(s->note.substr(0, 300)) + ")" : "");
    if (s->outcome == "skip") r.skipped.insert(pick);
    else if (s->outcome == "bad") r.hi = pick;
    else r.lo = pick;
  }
}

// The first bad commit (or the commits it could also be, that did not build),
// recorded in the state and printed with its comparison.
int report_first_bad(Bisect& b, const Range& r) {
  const std::string first = b.commits[size_t(r.hi)];
  std::vector<std::string> maybe;
  for (int i = r.lo + 1; i < r.hi; ++i) maybe.push_back(short_sha(b.commits[size_t(i)]));
  const Step* at = find_step(b, first);
  b.state["first_bad"] = first;
  b.state["could_also_be"] = maybe;
  save_bisect(b);
  if (at) fmt::print("\n{}", at->table);
  if (maybe.empty()) {
    fmt::print("first bad commit: {} {}\n", first, escape::terminal(commit_subject(b.repo, first)));
  } else {
    std::string names;
    for (const auto& m : maybe) names += " " + m;
    fmt::print("first bad commit: {} {}, or one of the commits before it that did not build:{}\n", first,
               escape::terminal(commit_subject(b.repo, first)), names);
  }
  fmt::print("state: {}\n", b.state_path);
  return 0;
}

}  // namespace

int bisect_command(const Options& o) {
  Bisect b;
  b.layout = find_layout();
  std::string error;
  if (auto e = refuse_run_only(o, true); !e.empty()) return bad_input(kWhoBisect, e);
  if (!find_commits(o, b, error) || !prepare_comparisons(o, b, error) || !open_bisect_state(o, b, error))
    return bad_input(kWhoBisect, error);
  if (auto end = check_good_and_bad(o, b)) return *end;
  int exit_code = 0;
  auto range = walk(o, b, exit_code);
  if (!range) return exit_code;
  return report_first_bad(b, *range);
}

}  // namespace mh
