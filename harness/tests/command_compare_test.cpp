// harness compare --baseline-command --candidate-command: two builds of one
// program (hold.cpp, 20 MB against 24 MB held) under one allocator, what the
// user sees of it (exit code, table, comparison JSON), and the combinations it
// refuses. Runs the harness binary; about ten seconds.
#include <gtest/gtest.h>

#include "test_util.h"

namespace mh {
namespace {

// A comparison of two commands in `rounds` rounds; the program holds for 50 ms.
Captured compare_commands(const std::string& baseline, const std::string& candidate, const std::string& out,
                          std::vector<std::string> more = {}, const std::string& rounds = "5") {
  std::vector<std::string> args = {"compare", "--baseline-command", baseline + " 50", "--candidate-command",
                                   candidate + " 50", "--runs", rounds, "-q", "-o", out};
  args.insert(args.end(), more.begin(), more.end());
  return test::run_harness(args);
}

const Json& metric(const Json& comparison, const std::string& name) {
  for (const auto& m : comparison["workloads"][0]["metrics"])
    if (m["metric"] == name) return m;
  static const Json none;
  return none;
}

TEST(CompareCommands, TwentyPercentMoreHeldIsARegressionOnPeakRss) {
  const std::string out = test::scratch("commands.json");
  const std::string md = test::scratch("commands.md");
  auto c = compare_commands(HOLD_20, HOLD_24, out, {"--export-markdown", md});
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  Json j = test::load_json(out);
  EXPECT_EQ(metric(j, "peak_rss_kb")["verdict"], "regression") << c.out;
  EXPECT_GT(metric(j, "peak_rss_kb")["change"].get<double>(), 0.15) << c.out;
  // The runs were made in rounds: the change within them, which 5 rounds
  // estimate but cannot bound at 95%.
  const Json paired = metric(j, "peak_rss_kb")["paired"];
  ASSERT_TRUE(paired.is_object()) << metric(j, "peak_rss_kb").dump();
  EXPECT_EQ(paired["rounds"], 5);
  EXPECT_GT(paired["change"].get<double>(), 0.15) << paired.dump();
  EXPECT_LT(paired["change"].get<double>(), 0.25) << paired.dump();
  EXPECT_EQ(paired["ci"], Json::array({nullptr, nullptr})) << paired.dump();
  EXPECT_EQ(c.out.find("within rounds"), std::string::npos) << "no interval, no column: " << c.out;
  // Which side ran which command, under which allocator.
  EXPECT_EQ(j["baseline"]["command"], std::string(HOLD_20) + " 50");
  EXPECT_EQ(j["candidate"]["command"], std::string(HOLD_24) + " 50");
  EXPECT_EQ(j["candidate"]["allocator"], "glibc");
  EXPECT_EQ(j["workloads"][0]["workload"], "hold-20-vs-hold-24");
  // The table's heads name the sides; the headline says the allocator.
  EXPECT_NE(c.out.find("baseline: " + std::string(HOLD_20) + " 50"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("candidate: " + std::string(HOLD_24) + " 50"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.rfind("REGRESSION in ", 0), 0u) << c.out;  // the headline, first
  EXPECT_NE(c.out.find("peak_rss_kb +"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find(" -- candidate " + std::string(HOLD_24) + " 50 against baseline " + std::string(HOLD_20) +
                       " 50 under glibc, 5 rounds"),
            std::string::npos)
      << c.out;
  EXPECT_NE(test::slurp(md).find("| metric | baseline: " + std::string(HOLD_20) + " 50 |"), std::string::npos)
      << test::slurp(md);
  // The runs report analysed again names the sides the same way.
  const std::string again_out = test::scratch("commands-again.json");
  auto again = test::run_harness({"compare", j["context"]["runs_report"].get<std::string>(), "-o", again_out});
  EXPECT_EQ(again.exit_code, 1) << again.err;
  EXPECT_NE(again.out.find("against baseline " + std::string(HOLD_20) + " 50 under glibc"), std::string::npos)
      << again.out;
  const Json again_paired = metric(test::load_json(again_out), "peak_rss_kb")["paired"];
  EXPECT_EQ(again_paired, paired) << again_paired.dump();
}

// Six rounds: the change within rounds gets its interval, and the table its column.
TEST(CompareCommands, AProgramAgainstItselfIsNoRegression) {
  const std::string out = test::scratch("commands-aa.json");
  auto c = compare_commands(HOLD_20, HOLD_20, out, {"-a", "glibc"}, "6");
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  Json j = test::load_json(out);
  EXPECT_EQ(metric(j, "peak_rss_kb")["verdict"], "no change") << c.out;
  const Json paired = metric(j, "peak_rss_kb")["paired"];
  ASSERT_TRUE(paired.is_object() && paired["ci"][0].is_number()) << paired.dump();
  EXPECT_EQ(paired["rounds"], 6);
  EXPECT_LE(paired["ci"][0].get<double>(), paired["change"].get<double>()) << paired.dump();
  EXPECT_GE(paired["ci"][1].get<double>(), paired["change"].get<double>()) << paired.dump();
  EXPECT_NE(c.out.find("within rounds"), std::string::npos) << c.out;
  EXPECT_EQ(j["workloads"][0]["workload"], "hold-20");
  EXPECT_FALSE(j["regression"].get<bool>());
}

// Each refused with exit 2, before anything runs, naming what is wrong.
TEST(CompareCommands, BadCombinationsAreExitTwoNamingWhatIsWrong) {
  const std::string a = HOLD_20, b = HOLD_24;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--baseline-command", a}, "--baseline-command without --candidate-command"},
      {{"--candidate-command", b}, "--candidate-command without --baseline-command"},
      {{"--baseline-command", a, "--candidate-command", b, "--baseline", "glibc"}, "give one pair, not both"},
      {{"--baseline-command", a, "--candidate-command", b, "--workload", "burst-writefile"},
       "no --workload, --suite or -- PROGRAM"},
      {{"--baseline-command", a, "--candidate-command", b, "--suite", "quick"}, "no --workload, --suite"},
      {{"--baseline-command", a, "--candidate-command", b, "--baseline-allocator", "glibc"}, "-a PIN"},
      {{"--baseline-command", a + " 'open", "--candidate-command", b}, "--baseline-command '" + a + " 'open' is not"},
      {{"--baseline-command", a, "--candidate-command", "/no/such/program"}, "--candidate-command: program"},
      {{"--baseline-command", a, "--candidate-command", b, "--smoke"}, "unexpected argument --smoke"},
      {{"--baseline-command", a, "--candidate-command", b, "-a", "hoard"}, "'hoard'"},
  };
  for (const auto& [args, said] : cases) {
    std::vector<std::string> line = {"compare", "-q", "-o", test::scratch("refused.json")};
    line.insert(line.end(), args.begin(), args.end());
    auto c = test::run_harness(line);
    EXPECT_EQ(c.exit_code, 2) << args.back() << c.out << c.err;
    EXPECT_NE(c.err.find(said), std::string::npos) << "expected '" << said << "' in: " << c.err;
  }
}

}  // namespace
}  // namespace mh
