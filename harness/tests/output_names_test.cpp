// Default output names: reserved, never the name of an existing file.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "report/output_names.h"
#include "test_util.h"

namespace mh {
namespace {

TEST(OutputNames, ManyReservationsInOneMillisecondAreAllDistinct) {
  const std::string dir = test::scratch("reserve");
  std::set<std::string> seen;
  for (int i = 0; i < 20; ++i) {
    std::string error;
    auto paths = reserve_new_outputs(dir + "/compare", {".json", "-runs.json"}, error);
    ASSERT_EQ(paths.size(), 2u) << error;
    EXPECT_TRUE(paths[1].ends_with("-runs.json")) << paths[1];
    EXPECT_EQ(paths[0].substr(0, paths[0].size() - 5) + "-runs.json", paths[1]);  // a pair, named alike
    for (const auto& p : paths) {
      EXPECT_TRUE(std::filesystem::exists(p)) << p;
      EXPECT_TRUE(seen.insert(p).second) << p << " reserved twice";
    }
  }
}

TEST(OutputNames, StampHasMilliseconds) {
  std::string s = utc_stamp_ms();
  ASSERT_EQ(s.size(), std::string("20261130T100014.123Z").size()) << s;
  EXPECT_EQ(s[8], 'T');
  EXPECT_EQ(s[15], '.');
  EXPECT_EQ(s.back(), 'Z');
}

}  // namespace
}  // namespace mh
