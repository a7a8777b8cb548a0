// The harness bounded by construction against what a program sends or writes
// over, and --resume writing only where a journal's own name says: whatever
// the program does, the report it writes is one its readers take back.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "measure/run_bounds.h"
#include "test_util.h"

namespace mh {
namespace {

namespace fs = std::filesystem;

// The harness run to its end, with its own peak RSS (wait4 of it alone; its
// program's is smaller in these tests) and what it printed on standard error.
struct Measured {
  int exit_code = -1;
  long maxrss_kb = 0;
  std::string err;
};

Measured run_measured(std::vector<std::string> args, const std::string& name) {
  args.insert(args.begin(), HARNESS_BIN);
  const std::string err_path = test::scratch(name + ".err");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(err, 2);
    execv(HARNESS_BIN, argv.data());
    _exit(127);
  }
  Measured m;
  int status = 0;
  rusage ru{};
  if (pid > 0 && wait4(pid, &status, 0, &ru) == pid && WIFEXITED(status)) m.exit_code = WEXITSTATUS(status);
  m.maxrss_kb = ru.ru_maxrss;
  m.err = test::slurp(err_path);
  return m;
}

// The readers of a report: each takes it back (exit 0), whatever it holds.
void expect_read_back(const std::string& report, bool with_sites) {
  const std::string merged = test::scratch(fs::path(report).stem().string() + "-merged.json");
  auto merge = test::run_harness({"merge", report, "-o", merged});
  EXPECT_EQ(merge.exit_code, 0) << merge.err;
  auto compare = test::run_harness({"compare", report, merged, "--export-csv", test::scratch("c.csv")});
  EXPECT_EQ(compare.exit_code, 0) << compare.err;
  const std::string store = test::scratch(fs::path(report).stem().string() + ".sqlite");
  auto history = test::run_harness({"history", "add", "--history", store, "--revision", "r1", report});
  EXPECT_EQ(history.exit_code, 0) << history.err;
  if (with_sites) {
    auto folded = test::run_harness({"export", "--folded", report, "-o", test::scratch("f.folded")});
    EXPECT_EQ(folded.exit_code, 0) << folded.err;
  }
}

// A plan's runs share what its report may hold: one run keeps the defaults,
// 168 runs keep a 168th of the budget each, never less than the floors.
TEST(Bounded, APlanOfManyRunsShrinksEachRunsBounds) {
  const RunBounds one = bounds_for_plan(1), suite = bounds_for_plan(168), huge = bounds_for_plan(100000);
  EXPECT_EQ(one.marks, 10000u);
  EXPECT_EQ(one.message_bytes, 4u << 20);
  EXPECT_EQ(one.site_frames, 65536u);
  EXPECT_EQ(suite.marks, 548u);
  EXPECT_EQ(suite.message_bytes, 230188u);
  EXPECT_EQ(suite.site_frames, 3596u);
  EXPECT_EQ(suite.mark_name_bytes, 1024u);
  EXPECT_EQ(huge.marks, 16u);
  EXPECT_EQ(huge.message_bytes, 16u << 10);
}

// Past a thousand marks of 1 MB names and ten thousand others, the harness
// keeps the marks its bounds say, counts the rest, stays small and writes a
// report its readers take. (Before the bounds: 300 marks of 1 MB names took it
// to 2 GB and a 522 MB report.)
TEST(Bounded, MarksPastTheBoundsAreCountedAndDropped) {
  const std::string out = test::scratch("many-marks.json");
  const std::string script = std::string(MARK_CLIENT) + " marks 1000 1000000 && " + MARK_CLIENT + " marks 10100 100";
  auto h = run_measured({"-a", "glibc", "-n", "1", "--timeout", "300", "-o", out, "--", "bash", "-c", script},
                        "many-marks");
  ASSERT_EQ(h.exit_code, 0) << h.err;
  const auto bytes = fs::file_size(out);
  std::printf("harness peak RSS %ld KiB, report %ju bytes\n", h.maxrss_kb, uintmax_t(bytes));
  EXPECT_LT(h.maxrss_kb, 400 * 1024) << "the harness's peak RSS passed the bound docs/reports.md states";
  EXPECT_LT(bytes, 64u << 20) << "the report passed the bound docs/reports.md states";
  const Json report = test::load_json(out);
  Json run = report["runs"][0];
  EXPECT_EQ(run["status"], "ok") << run["exit"];
  EXPECT_EQ(run["marks"].size(), 10000u);
  ASSERT_TRUE(run.contains("dropped")) << run.dump().substr(0, 2000);
  EXPECT_EQ(run["dropped"]["marks"]["count"], 1000 + 100);
  const std::string why = run["dropped"]["marks"]["why"];
  EXPECT_NE(why.find("a name longer than 1024 bytes"), std::string::npos) << why;
  EXPECT_NE(why.find("past the 10000 marks a run keeps"), std::string::npos) << why;
  expect_read_back(out, false);
}

// Data messages past the run's budget are counted and dropped, not kept.
TEST(Bounded, MessagesPastTheBudgetAreCountedAndDropped) {
  const std::string out = test::scratch("many-data.json");
  auto h = run_measured({"-a", "glibc", "-n", "1", "--timeout", "300", "-o", out, "--", MARK_CLIENT, "data", "64",
                         "1000000"},
                        "many-data");
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_LT(fs::file_size(out), 8u << 20);
  Json run = test::load_json(out)["runs"][0];
  EXPECT_EQ(run["status"], "ok") << run["exit"];
  EXPECT_EQ(run["data"].size(), 4u);  // 4 MiB of 1 MB values
  EXPECT_EQ(run["dropped"]["messages"]["count"], 60);
}

// A program that writes out-of-range values over its own ledger's counters
// and tables: the run ends ok, the figures read from them are null with the
// reason, and every reader takes the report back. (Before: `export`,
// `compare`, `merge` and `history add` refused it: heap_blocks[5]: ... found -256.)
TEST(Bounded, GarbageInTheLedgerRegionIsNullWithAReason) {
  const std::string out = test::scratch("ledger-garbage.json");
  auto h = run_measured({"--ledger", "--heap-sample", "4K", "-a", "glibc", "-n", "1", "-o", out, "--", MARK_CLIENT,
                         "ledger-garbage"},
                        "ledger-garbage");
  ASSERT_EQ(h.exit_code, 0) << h.err;
  const Json report = test::load_json(out);
  Json run = report["runs"][0];
  EXPECT_EQ(run["status"], "ok") << run["exit"];
  ASSERT_TRUE(run["sampler"].contains("null_cells")) << run["sampler"];
  EXPECT_NE(run["sampler"]["null_cells"].value("heap_blocks", "").find("out of the range a report holds"),
            std::string::npos)
      << run["sampler"];
  ASSERT_EQ(run["marks"].size(), 2u);
  EXPECT_TRUE(run["marks"][1]["sample"]["heap_blocks"].is_null()) << run["marks"][1];
  EXPECT_FALSE(run["marks"][1].contains("heap_sites")) << "call sites read from garbage were kept";
  EXPECT_NE(run["dropped"]["heap_sites"]["why"].get<std::string>().find("out of the range a report holds"),
            std::string::npos)
      << run["dropped"];
  expect_read_back(out, true);
}

// A journal whose header names another file than its own name says:
// refused with exit 2, nothing written anywhere. (Before: --resume replaced
// the file the header named with the report.)
TEST(Bounded, AJournalNamingAnotherFileIsRefused) {
  const std::string dir = test::scratch("journal-dir");
  fs::create_directories(dir);
  const std::string report = dir + "/r.json", other = dir + "/precious.txt";
  auto first = test::run_harness({"-a", "glibc", "-n", "1", "-o", report, "--", MARK_CLIENT});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const Json done = test::load_json(report);
  { std::ofstream(other) << "not a report\n"; }
  const std::string journal = report + ".journal-AbC123";
  {
    std::ofstream j(journal);
    j << Json{{"schema", "memharness.journal/1"}, {"report", other}, {"context", done["context"]},
              {"metrics", done["metrics"]}}
             .dump()
      << "\n";
  }
  const std::string report_before = test::slurp(report);
  auto again = test::run_harness({"-a", "glibc", "-n", "1", "--resume", journal, "--", MARK_CLIENT});
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_NE(again.err.find("its header names the report '" + other + "', but its name says " + report),
            std::string::npos)
      << again.err;
  EXPECT_EQ(test::slurp(other), "not a report\n");
  EXPECT_EQ(test::slurp(report), report_before);
}

// A journal renamed so that its name says no report: refused the same way.
TEST(Bounded, AJournalWhoseNameSaysNoReportIsRefused) {
  const std::string dir = test::scratch("journal-renamed");
  fs::create_directories(dir);
  const std::string other = dir + "/precious.json", journal = dir + "/kept-journal";
  { std::ofstream(other) << "{}\n"; }
  { std::ofstream(journal) << Json{{"schema", "memharness.journal/1"}, {"report", other}}.dump() << "\n"; }
  auto again = test::run_harness({"-a", "glibc", "-n", "1", "--resume", journal, "--", MARK_CLIENT});
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_NE(again.err.find("this name says no report"), std::string::npos) << again.err;
  EXPECT_EQ(test::slurp(other), "{}\n");
}

}  // namespace
}  // namespace mh
