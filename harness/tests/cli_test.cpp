// What a user sees on bad input: exit code 2 and a message naming the bad
// value and the valid choices, before anything runs.
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>

#include "core/suggest.h"
#include "test_util.h"

namespace mh {
namespace {

void expect_bad_input(const std::vector<std::string>& args, const std::vector<std::string>& needles) {
  auto c = test::run_harness(args);
  EXPECT_EQ(c.exit_code, 2) << c.err;
  for (const auto& n : needles) EXPECT_NE(c.err.find(n), std::string::npos) << "missing '" << n << "' in: " << c.err;
}

TEST(Cli, UnknownWorkloadListsTheValidOnes) {
  expect_bad_input({"--workload", "burst-write"}, {"'burst-write'", "burst-writefile"});
}

TEST(Cli, UnknownAllocatorListsTheValidOnes) {
  expect_bad_input({"--workload", "burst-writefile", "--smoke", "--allocator", "hoard"}, {"'hoard'", "jemalloc", "tcmalloc"});
}

TEST(Cli, UnknownWorkloadParameterListsTheParameters) {
  expect_bad_input({"--workload", "burst-writefile", "--cals", "3"}, {"--cals", "--calls", "--release-on-pool"});
}

TEST(Cli, OutOfRangeParameterNamesTheValueAndTheRange) {
  expect_bad_input({"--workload", "burst-writefile", "--calls", "0"}, {"'0'", "--calls", "between 1 and"});
  expect_bad_input({"--workload", "burst-writefile", "--size", "lots"}, {"'lots'", "--size", "1.5M"});
  expect_bad_input({"--workload", "burst-writefile", "--idle-hook", "sometimes"}, {"'sometimes'", "none, inline, handoff"});
}

// --seed after a workload is the workload's own (the ledger's sampling seed is
// --heap-seed): it once set the ledger's seed, unused without --heap-sample,
// and the workload ran its default seed, 42, whatever was asked.
TEST(Cli, SeedAfterAWorkloadIsTheWorkloads) {
  const std::string out = test::scratch("seeded.json");
  auto c = test::run_harness({"-w", "flat-churn", "--smoke", "--duration", "0.5", "--warmup", "0", "--seed", "3", "-a",
                              "glibc", "-n", "1", "-q", "-o", out});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(test::load_json(out)["runs"][0]["params"]["seed"], 3);
  // A workload without a seed of its own says so, naming its parameters.
  expect_bad_input({"-w", "thp-partial", "--smoke", "--seed", "3"}, {"--seed", "--settle-ms"});
}

TEST(Cli, HarnessOptionOutOfRange) {
  expect_bad_input({"--workload", "burst-writefile", "--runs", "0"}, {"--runs", "0"});
  expect_bad_input({"--workload", "burst-writefile", "--sample-ms", "0.5"}, {"--sample-ms"});
  expect_bad_input({"--workload", "burst-writefile", "--smaps-ms", "-5"}, {"--smaps-ms", "-5"});
}

TEST(Cli, NotASharedLibrary) {
  expect_bad_input({"--workload", "burst-writefile", "--allocator", "mine=/etc/hostname"}, {"/etc/hostname", "not a shared library"});
}

TEST(Cli, UnwritableOutput) {
  expect_bad_input({"--workload", "burst-writefile", "--smoke", "--out", "/proc/no/report.json"}, {"/proc/no"});
}

TEST(Cli, NoWorkload) { expect_bad_input({}, {"--workload"}); }

TEST(Cli, ListShowsWorkloadsAndParameters) {
  auto c = test::run_harness({"--list"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("burst-writefile"), std::string::npos);
  EXPECT_NE(c.out.find("--release-on-pool"), std::string::npos);
  EXPECT_NE(c.out.find("default 300"), std::string::npos);
}

TEST(Cli, HelpExitsZero) {
  auto c = test::run_harness({"--help"});
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_NE(c.out.find("--sample-ms"), std::string::npos);
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

TEST(CliAllocatorOptions, AnOptionTheLibraryDoesNotHaveIsBadInput) {
  const std::vector<std::string> run = {"--workload", "timer-turns", "--smoke", "--runs", "1", "--quiet", "--allocator"};
  auto with = [&](const std::string& a) {
    auto args = run;
    args.push_back(a);
    return args;
  };
  // Names the library lists itself (mimalloc, scav, glibc's loader) or documents (tcmalloc).
  expect_bad_input(with("mimalloc:not_an_option=1"), {"'not_an_option'", "decommit_delay"});
  expect_bad_input(with("scav:purge_dlay_ms=5000"), {"'purge_dlay_ms'", "purge_delay_ms"});
  expect_bad_input(with("tcmalloc:release_rat=10"), {"'release_rat'", "release_rate"});
  expect_bad_input(with("glibc:tcache_cnt=1"), {"'tcache_cnt'", "tcache_count"});
  expect_bad_input(with("glibc:tcache_count=abc"), {"'abc'", "tcache_count", "integer"});
}

TEST(CliAllocatorOptions, SnmallocRefusesEveryOptionBeforeItIsBuilt) {
  // snmalloc reads no environment: an option would be silently ignored. The
  // pin is refused before its repository is cloned or built.
  const std::string cache = test::scratch("snmalloc-refused-cache");
  setenv("MEMHARNESS_PIN_CACHE", cache.c_str(), 1);
  expect_bad_input({"--workload", "micro", "--smoke", "--allocator", "snmalloc@0.7.5:max_slab=4"},
                   {"'snmalloc@0.7.5:max_slab=4'", "snmalloc reads no options from the environment",
                    "fixed when it is built"});
  unsetenv("MEMHARNESS_PIN_CACHE");
  EXPECT_FALSE(std::filesystem::exists(cache)) << "nothing cloned or built";
  // Any build named by its path, as family snmalloc, too.
  expect_bad_input({"--workload", "micro", "--smoke", "--allocator", "snmalloc=" + std::string(LEDGER_LIBRARY) + ":a=1"},
                   {"snmalloc reads no options"});
}

TEST(CliAllocatorOptions, AComplaintOfTheAllocatorFailsTheRun) {
  // jemalloc cannot list its options; it says so on stderr when it starts.
  std::string out = test::scratch("jemalloc-typo.json");
  auto c = test::run_harness({"--workload", "timer-turns", "--smoke", "--runs", "1", "--quiet", "--allocator",
                              "jemalloc:background_thred=true", "--out", out});
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  EXPECT_NE(c.out.find("Invalid conf pair: background_thred:true"), std::string::npos) << c.out;
  Json run = test::load_json(out)["runs"][0];
  EXPECT_EQ(run["status"], "failed");
  EXPECT_NE(run["exit"]["error"].get<std::string>().find("background_thred"), std::string::npos);
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

// The report name of a run without --out: nothing written earlier is replaced,
// even a report of the same workload made in the same second.
TEST(CliOutputs, ADefaultReportNameNeverReplacesAnEarlierReport) {
  namespace fs = std::filesystem;
  const fs::path dir = test::scratch("default-names");
  fs::create_directories(dir / "results");
  // Reports as the one-second names of the last and the next few seconds would call them.
  std::vector<fs::path> earlier;
  const time_t now = time(nullptr);
  for (time_t t = now - 1; t <= now + 20; ++t) {
    tm g{};
    gmtime_r(&t, &g);
    char name[64];
    strftime(name, sizeof name, "timer-turns-%Y%m%dT%H%M%SZ.json", &g);
    earlier.push_back(dir / "results" / name);
    std::ofstream(earlier.back()) << "earlier report\n";
  }
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  auto a = test::run_harness({"-w", "timer-turns", "--smoke", "-a", "glibc", "-n", "1", "-q"});
  auto b = test::run_harness({"-w", "timer-turns", "--smoke", "-a", "glibc", "-n", "1", "-q"});
  fs::current_path(cwd);
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(b.exit_code, 0) << b.err;
  for (const auto& p : earlier) EXPECT_TRUE(test::slurp(p) == "earlier report\n") << p << " was replaced";
  size_t reports = 0;
  for (const auto& e : fs::directory_iterator(dir / "results")) reports += e.path().extension() == ".json";
  EXPECT_EQ(reports, earlier.size() + 2);
  EXPECT_NE(a.out.find("report: results/timer-turns-"), std::string::npos) << a.out;
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

TEST(CliMessages, ABadValueNamesTheOptionTheValueAndTheRange) {
  auto runs = test::run_harness({"--workload", "timer-turns", "--runs", "three"});
  EXPECT_EQ(runs.exit_code, 2);
  EXPECT_TRUE(has(runs.err, "--runs: 'three' is not a whole number from 1 to 10000")) << runs.err;
  auto sample = test::run_harness({"--workload", "timer-turns", "--sample-ms", "0.5"});
  EXPECT_EQ(sample.exit_code, 2);
  EXPECT_TRUE(has(sample.err, "--sample-ms: '0.5' is not a number from 1 to 60000")) << sample.err;
  EXPECT_FALSE(has(sample.err, "1.000000")) << sample.err;
  auto out = test::run_harness({"--workload", "timer-turns", "--smoke", "-o", "/proc/version"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_TRUE(has(out.err, "--out: cannot write /proc/version in the folder /proc")) << out.err;
}

// Exit 0 with every one of `present` in the output and none of `absent`.
void expect_help(const std::vector<std::string>& args, const std::vector<std::string>& present,
                 const std::vector<std::string>& absent = {}) {
  auto c = test::run_harness(args);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  for (const auto& n : present) EXPECT_TRUE(has(c.out, n)) << "missing '" << n << "' in: " << c.out;
  for (const auto& n : absent) EXPECT_FALSE(has(c.out, n)) << "'" << n << "' in: " << c.out;
}

TEST(CliHelp, ListShowsChoicesSmokeAndNoEmptyDefaults) {
  expect_help({"--list"}, {"--idle-hook none|inline|handoff", "--smoke"}, {"(default \"\")", "/tmp) (default"});
}

TEST(CliHelp, HelpSaysSmokeExitCodesAndWhatCompareTakes) {
  expect_help({"--help"}, {"  --smoke ", "Exit codes: 0"});
  expect_help({"compare", "--help"}, {"harness compare [OPTIONS] OLD.json NEW.json", "--baseline-allocator"});
}

TEST(CliHelp, PlotHelpShowsTheScriptsOptions) {
  expect_help({"plot", "--help"},
              {"usage: plot_rss.py", "usage: plot_compare.py", "--metric", "--candidate-allocator"});
}

}  // namespace
}  // namespace mh

// A command line that helps: each subcommand's own help, the nearest choice for a
// typo, the choices of a group or a kind when none or another is given.
namespace mh {
namespace {

TEST(CliSuggest, EditDistanceCountsSwapsAsOneEdit) {
  EXPECT_EQ(edit_distance("comapre", "compare"), 1u);
  EXPECT_EQ(edit_distance("", "add"), 3u);
  EXPECT_EQ(edit_distance("steps", "steps"), 0u);
  EXPECT_EQ(edit_distance("--outt", "--out"), 1u);
  EXPECT_EQ(closest_choice("comapre", {"bisect", "compare", "merge"}), "compare");
  EXPECT_EQ(closest_choice("site", {"add", "merge", "show", "steps", "page", "ack"}), "");  // 3 edits from each
  EXPECT_EQ(closest_choice("ad", {"add", "ack"}), "");  // 1 edit, but half of a 2-letter word
}

TEST(CliSuggest, AnUnknownCommandSaysTheNearestAndTheCommands) {
  expect_bad_input({"comapre", "--baseline", "jemalloc", "--candidate", "scav", "-w", "idle-return"},
                   {"'comapre' is not a command (did you mean compare?)", "squeeze, merge, plot, export, show, table, page, history"});
  expect_bad_input({"zzz"}, {"'zzz' is not a command;", "compare, bisect"});
}

TEST(CliSuggest, AGroupWithoutItsVerbListsTheVerbs) {
  expect_bad_input({"history"}, {"history needs one of add, merge, show, steps, page, ack"});
  expect_bad_input({"history", "site"}, {"'site' is not a verb of history; the verbs are add, merge, show"});
  expect_bad_input({"history", "stpes"}, {"(did you mean steps?)"});
}

TEST(CliSuggest, AnUnknownOptionOfASubcommandSaysTheNearest) {
  const std::string report = test::scratch("suggest.json");
  std::ofstream(report) << "{}";
  expect_bad_input({"merge", report, "--outt", "x.json"}, {"--outt", "(did you mean --out?)"});
  expect_bad_input({"export", "--foldd", report}, {"(did you mean --folded?)"});
}

TEST(CliSuggest, HistoryShowWithoutAMetricListsTheStoresMetrics) {
  const std::string store = test::scratch("suggest.sqlite");
  auto run = test::run_harness({"-w", "timer-turns", "--smoke", "-a", "glibc", "-n", "1", "-q", "-o",
                                test::scratch("suggest-run.json"), "--history", store}, 120);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  expect_bad_input({"history", "show", "--history", store}, {"show needs --workload and --metric", "timer-turns"});
  expect_bad_input({"history", "show", "--history", store, "--workload", "timer-turns"},
                   {"show needs --metric; the metrics of timer-turns", "peak_rss_kb"});
}

TEST(CliHelp, EachSubcommandHasItsOwnUsageExitCodesAndExample) {
  const std::string run_usage = "--workload NAME [PARAMETERS...]";
  expect_help({"export", "--help"}, {"Usage: harness export (--folded REPORT | --trace REPORT | --pprof REPORT)",
                                    "Exit codes: 0", "Example:"},
              {run_usage});
  expect_help({"merge", "--help"}, {"Usage: harness merge REPORT...", "Exit codes: 0", "Example:"}, {run_usage});
  expect_help({"history", "--help"}, {"Usage: harness history add|merge|show|steps|page|ack", "Example:"},
              {run_usage});
  expect_help({"history", "steps", "--help"},
              {"Usage: harness history steps", "Exit codes: 0 no regression step", "harness history steps --last 1"},
              {run_usage});
  expect_help({"bisect", "--help"}, {"Exit codes: 0 the commit was found", "Example:"});
  expect_help({"sweep", "--help"}, {"Exit codes: 0 every run ok", "Example:"});
  expect_help({"compare", "--help"}, {"Example:\n  harness compare --baseline jemalloc"});
}

TEST(CliPlot, EveryKindThroughOneEntryAndATypoNamed) {
  expect_help({"plot", "--help"}, {"harness plot heap REPORT", "harness plot sweep SWEEP.json", "usage: plot_heap.py",
                                   "usage: plot_sweep.py", "Exit codes: 0 drawn"});
  expect_bad_input({"plot", "flme", "r.json", "-o", "f.png"},
                   {"'flme' is neither a kind of plot (did you mean flame?) nor a report", "rss, heap, compare"});
  // The kind selects its script: plot_sweep.py's own complaint about its missing input.
  auto sweep = test::run_harness({"plot", "sweep"});
  EXPECT_EQ(sweep.exit_code, 2);
  EXPECT_TRUE(has(sweep.err, "plot_sweep.py")) << sweep.err;
}

}  // namespace
}  // namespace mh
