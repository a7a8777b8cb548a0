// The validating JSON reader: limits, paths in its errors, and the fuzzers'
// corpus (fixtures/fuzz/) read again: each input a clean read or a clean error.
#include <gtest/gtest.h>

#include <filesystem>

#include "measure/sampler.h"
#include "report/report_json.h"
#include "sys/json_read.h"
#include "test_util.h"

namespace mh {
namespace {

namespace fs = std::filesystem;

TEST(JsonRead, ErrorsNameThePathWhatWasExpectedAndWhatWasFound) {
  const Json j = Json::parse(R"({"runs": [{}, {"odd key\u001b": [1, 2.5]}]})");
  const std::string what = "r.json";
  const JsonIn doc(j, what);
  const JsonIn runs = doc.at("runs");
  const JsonIn run = runs[1];
  const JsonIn cell = run.at("odd key\x1b")[1];
  try {
    cell.integer(0, 10);
    FAIL() << "2.5 read as an integer";
  } catch (const JsonError& e) {
    EXPECT_STREQ(e.what(), R"(r.json: runs[1]["odd key\u001b"][1]: expected an integer from 0 to 10, found 2.5)");
  }
  EXPECT_THROW(runs[0].at("status"), JsonError);
  EXPECT_EQ(doc.string_or("absent", "default"), "default");
}

TEST(JsonRead, IntegersAreRangeCheckedBeforeAnyConversion) {
  const std::string what = "x";
  for (const char* text : {"1e300", "-1e300", "1.5", "18446744073709551615", "-9223372036854775808"}) {
    const Json j = Json::parse(text);
    EXPECT_THROW(JsonIn(j, what).integer(0, 1000), JsonError) << text;
  }
  const Json nan = std::nan("");
  EXPECT_THROW(JsonIn(nan, what).number(-1, 1), JsonError);
  const Json whole = 7.0;
  EXPECT_EQ(JsonIn(whole, what).integer(0, 10), 7);
}

TEST(JsonRead, SizeAndNestingLimits) {
  std::string error;
  EXPECT_FALSE(parse_json(std::string(100, '['), "t", JsonLimits{50, 64}, error));
  EXPECT_NE(error.find("100 bytes, more than the 50"), std::string::npos) << error;
  EXPECT_TRUE(parse_json("[[[1]]]", "t", JsonLimits{100, 3}, error));
  EXPECT_FALSE(parse_json("[[[[1]]]]", "t", JsonLimits{100, 3}, error));
  EXPECT_EQ(error, "t: [0][0][0]: nested deeper than 3 levels");
  EXPECT_FALSE(parse_json(R"({"a": {"b": [0, {"c": {}}]}})", "t", JsonLimits{100, 3}, error));
  EXPECT_EQ(error, "t: a.b[1]: nested deeper than 3 levels");
}

// Every input the fuzzers kept (see harness/fuzz/README.md): read again without
// a crash. An input that reads must write back and read the same again.
TEST(JsonRead, TheReportFuzzCorpusReadsCleanly) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(std::string(FIXTURE_DIR) + "/fuzz/report")) {
    std::string error;
    const std::string text = test::slurp(e.path().string());
    if (auto report = report_from_text(text, e.path().filename().string(), error)) {
      const std::string again = dump_canonical(make_report(report->context, report->runs, report->complete));
      EXPECT_TRUE(report_from_text(again, "written again", error)) << e.path() << ": " << error;
    } else {
      EXPECT_FALSE(error.empty()) << e.path();
    }
    ++n;
  }
  EXPECT_GT(n, 0);
}

TEST(JsonRead, TheMarkLineFuzzCorpusReadsCleanly) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(std::string(FIXTURE_DIR) + "/fuzz/mark")) {
    RunRecord r;
    std::string error;
    if (!apply_message(test::slurp(e.path().string()), r, error)) {
      EXPECT_FALSE(error.empty()) << e.path();
    }
    ++n;
  }
  EXPECT_GT(n, 0);
}

}  // namespace
}  // namespace mh
