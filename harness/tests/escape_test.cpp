// Escaping by destination (core/escape.h) and the environment the harness gives
// what it starts (sys/spawn.h): pure functions on hand-made strings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/escape.h"
#include "sys/spawn.h"

namespace mh {
namespace {

const std::string kJ(escape::kWordJoiner);

TEST(EscapeMarkdown, MentionsReferencesAndLinksAreBrokenByAJoiner) {
  EXPECT_EQ(escape::markdown("@octocat and @org/team"), "@" + kJ + "octocat and @" + kJ + "org/team");
  EXPECT_EQ(escape::markdown("#123 owner/repo#9 #x"), "#" + kJ + "123 owner/repo#" + kJ + "9 #x");
  EXPECT_EQ(escape::markdown("GH-7 gh-8 GH-x"), "GH" + kJ + "-7 gh" + kJ + "-8 GH-x");
  EXPECT_EQ(escape::markdown("https://evil.example/x ftp://y"), "https:" + kJ + "//evil.example/x ftp:" + kJ + "//y");
  EXPECT_EQ(escape::markdown("see WWW.evil.example"), "see WWW" + kJ + ".evil.example");
  EXPECT_EQ(escape::markdown("a.b@evil.example"), "a.b@" + kJ + "evil.example");
  EXPECT_EQ(escape::markdown("scav@c3b7a36"), "scav@" + kJ + "c3b7a36");
}

TEST(EscapeMarkdown, TextWithoutThemIsAsBefore) {
  EXPECT_EQ(escape::markdown("peak_rss_kb (MB) | x"), "peak_rss_kb (MB) \\| x");
  EXPECT_EQ(escape::markdown("a `b` [c](d) <e>&"), "a \\`b\\` \\[c\\](d) &lt;e&gt;&amp;");
  EXPECT_EQ(escape::markdown("line\nnext\x1b[2J"), "line\\nnext\\e\\[2J");
  EXPECT_EQ(escape::markdown("ratio 3:1, www, #"), "ratio 3:1, www, #");
}

TEST(EscapeCsv, AFormulaIsText) {
  EXPECT_EQ(escape::csv("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  for (const char* s : {"+1", "-1", "@SUM(A1)", "\tx"}) EXPECT_EQ(escape::csv(s), std::string("'") + s) << s;
  EXPECT_EQ(escape::csv("\rx"), "\"'\rx\"");
  EXPECT_EQ(escape::csv("=1,2"), "\"'=1,2\"");
  EXPECT_EQ(escape::csv("burst-writefile"), "burst-writefile");
  EXPECT_EQ(escape::csv("a,b"), "\"a,b\"");
  EXPECT_EQ(escape::csv(""), "");
}

TEST(Environment, CiCredentialsAreWithheldByName) {
  setenv("GITHUB_TOKEN", "secret", 1);
  setenv("INPUT_COMMAND", "env", 1);
  setenv("ACTIONS_ID_TOKEN_REQUEST_URL", "https://x", 1);
  setenv("MEMHARNESS_TEST_KEPT", "kept", 1);
  const auto env = clean_environment();
  const auto withheld = withheld_credentials();
  unsetenv("GITHUB_TOKEN");
  unsetenv("INPUT_COMMAND");
  unsetenv("ACTIONS_ID_TOKEN_REQUEST_URL");
  unsetenv("MEMHARNESS_TEST_KEPT");
  EXPECT_EQ(env.count("GITHUB_TOKEN") + env.count("INPUT_COMMAND") + env.count("ACTIONS_ID_TOKEN_REQUEST_URL"), 0u);
  EXPECT_EQ(env.at("MEMHARNESS_TEST_KEPT"), "kept");
  for (const char* name : {"ACTIONS_ID_TOKEN_REQUEST_URL", "GITHUB_TOKEN", "INPUT_COMMAND"})
    EXPECT_NE(std::find(withheld.begin(), withheld.end(), name), withheld.end()) << name;
  EXPECT_TRUE(std::is_sorted(withheld.begin(), withheld.end()));
}

}  // namespace
}  // namespace mh
