// Text made valid UTF-8 where it enters a record, escaping by destination
// (core/escape.h), the JSON writer's backstop, and the environment the harness
// gives what it starts (sys/spawn.h): pure functions on hand-made strings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>

#include "core/escape.h"
#include "core/record.h"
#include "sys/spawn.h"

namespace mh {
namespace {

// Valid as nlohmann's writer judges it: dump() throws on anything else.
bool writes_as_json(const std::string& s) {
  try {
    (void)Json(s).dump();
    return true;
  } catch (const Json::type_error&) {
    return false;
  }
}

const std::string kFffd = "\xef\xbf\xbd";

TEST(Escape, ShownReplacesEachByteThatIsNotUtf8) {
  EXPECT_EQ(escape::shown("a\xff" "b"), "a" + kFffd + "b");
  EXPECT_EQ(escape::shown("\xe2\x82"), kFffd + kFffd);                 // a character cut short
  EXPECT_EQ(escape::shown("\xc0\xaf"), kFffd + kFffd);                 // overlong '/'
  EXPECT_EQ(escape::shown("\xed\xa0\x80"), kFffd + kFffd + kFffd);     // a surrogate
  EXPECT_EQ(escape::shown("\xf4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // past U+10FFFF
  const std::string text = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \\x41\n\t";
  EXPECT_EQ(escape::shown(text), text);  // valid text, controls included, as it was
}

TEST(Escape, ShownTailNeverSplitsACharacter) {
  std::string euros;
  for (int i = 0; i < 3000; ++i) euros += "\xe2\x82\xac";
  const std::string tail = escape::shown_tail(euros, 4096);
  EXPECT_EQ(tail.size(), 4095u);  // 1365 whole characters
  EXPECT_EQ(tail, euros.substr(euros.size() - 4095));
  EXPECT_TRUE(writes_as_json(tail));
  EXPECT_EQ(escape::shown_tail("abc", 4096), "abc");
  EXPECT_EQ(escape::shown_tail("abcdef", 3), "def");
  // Replaced bytes count in the bound: three bytes each.
  const std::string bad(100, '\xff');
  EXPECT_EQ(escape::shown_tail(bad, 10), kFffd + kFffd + kFffd);
  for (size_t max = 0; max < 12; ++max) {
    const std::string t = escape::shown_tail("x\xe2\x82\xac\xff" "y\xf0\x9f\x98\x80", max);
    EXPECT_LE(t.size(), max);
    EXPECT_TRUE(writes_as_json(t)) << max;
  }
}

TEST(Escape, IdentityKeepsValidTextAndEscapesTheRest) {
  for (const std::string s : {"", "plain", "caf\xc3\xa9", "a\\b", "C:\\Users", "end\\", "printf 'a\\n'"})
    EXPECT_EQ(escape::identity(s), s);
  EXPECT_EQ(escape::identity("a\xff" "b"), "a\\xffb");
  EXPECT_EQ(escape::identity("\xe2\x82"), "\\xe2\\x82");
  // A backslash doubled only where it would otherwise read as an escape.
  EXPECT_EQ(escape::identity("\\xff"), "\\\\xff");
  EXPECT_EQ(escape::identity("\\\\"), "\\\\\\");
  EXPECT_EQ(escape::identity("\\\xff"), "\\\\\\xff");
  // Two different byte strings never give one name.
  EXPECT_NE(escape::identity("\xff"), escape::identity("\\xff"));
  EXPECT_NE(escape::identity("\xff"), escape::identity("\xfe"));
}

TEST(Escape, IdentityRoundTripsEveryByteString) {
  const std::string samples[] = {"\\",    "\\\\",   "\\x",      "\\xf",     "\\xff",   "\\\xff", "x\\\\x\xff\\",
                                 "\xff\\", "\\\\\\", "a\\xZZb",  "\\x4142", "\xe2\x82\xac\\\xe2\x82"};
  for (const auto& s : samples) {
    EXPECT_EQ(escape::from_identity(escape::identity(s)), s) << escape::terminal(s);
    EXPECT_TRUE(writes_as_json(escape::identity(s)));
  }
  // Random strings over an alphabet that makes escapes likely.
  std::mt19937 gen(47);
  const std::string alphabet = "\\xX0fA\xff\x80\xc3\xa9\xe2\x82\xac\xed\xa0\xf0\x9f";
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    const size_t len = gen() % 12;
    for (size_t i = 0; i < len; ++i) s += alphabet[gen() % alphabet.size()];
    const std::string id = escape::identity(s);
    ASSERT_EQ(escape::from_identity(id), s) << escape::terminal(s) << " -> " << id;
    ASSERT_TRUE(writes_as_json(id)) << escape::terminal(s);
  }
  const std::vector<std::string> words = {"prog", "\xff"};
  EXPECT_EQ(escape::identity(words), (std::vector<std::string>{"prog", "\\xff"}));
}

TEST(Escape, JsonTextWritesWhatDumpWouldThrowOn) {
  const Json j{{"tail", "a\xff" "b"}, {"cut", "\xe2\x82"}};
  EXPECT_FALSE(writes_as_json("a\xff"));
  EXPECT_EQ(json_text(j), "{\"tail\":\"a\xef\xbf\xbd" "b\",\"cut\":\"\xef\xbf\xbd\"}");
  EXPECT_EQ(json_text(Json{{"k", 1}}, 2), "{\n  \"k\": 1\n}");
}

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
