// Statistics on hand-made inputs.
#include <gtest/gtest.h>

#include "core/stats.h"

namespace mh::stats {
namespace {

TEST(Stats, MedianOfOddCountIsTheMiddle) { EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3); }
TEST(Stats, MedianOfEvenCountIsTheMeanOfTheMiddleTwo) { EXPECT_DOUBLE_EQ(median({4, 1, 10, 2}), 3); }
TEST(Stats, MedianOfOne) { EXPECT_DOUBLE_EQ(median({7}), 7); }
TEST(Stats, MedianIgnoresOneOutlier) { EXPECT_DOUBLE_EQ(median({100, 101, 99, 5000, 100}), 100); }

TEST(Stats, SummaryHasRangeAndCount) {
  auto s = summarize({3, 9, 1, 4});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->median, 3.5);
  EXPECT_DOUBLE_EQ(s->min, 1);
  EXPECT_DOUBLE_EQ(s->max, 9);
  EXPECT_EQ(s->n, 4u);
}

TEST(Stats, SummaryOfNothingIsNothing) { EXPECT_FALSE(summarize({})); }

}  // namespace
}  // namespace mh::stats
