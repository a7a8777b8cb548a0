// Patterns over program output: POSIX extended syntax, leftmost-longest, and
// no pattern that makes a long line slow or crashes the harness.
#include "sys/pattern.h"

#include <gtest/gtest.h>

#include <string>

namespace mh {
namespace {

Pattern compiled(const std::string& text) {
  std::string error;
  auto p = Pattern::compile(text, error);
  EXPECT_TRUE(p) << text << ": " << error;
  return *p;
}

TEST(Pattern, MatchesAnywhereInTheLineWithPosixSyntax) {
  EXPECT_TRUE(compiled("listening on [0-9]+").found_in("server: listening on 6379"));
  EXPECT_FALSE(compiled("^listening").found_in("server: listening"));
  EXPECT_TRUE(compiled("(a|b)+c").found_in("xxababc"));
}

TEST(Pattern, TheFirstGroupIsTheLongestMatch) {
  auto p = compiled("took ([0-9.]+) ms");
  EXPECT_EQ(p.groups(), 1);
  EXPECT_EQ(p.first_group("it took 12.5 ms, then"), "12.5");
  EXPECT_EQ(p.first_group("nothing here"), std::nullopt);
  EXPECT_EQ(compiled("(a|ab)(c|bcd)").first_group("abcd"), "a");  // leftmost-longest overall: abcd
}

TEST(Pattern, WhatRe2DoesNotTakeIsAnErrorNotACrash) {
  std::string error;
  EXPECT_FALSE(Pattern::compile("(a)\\1", error));  // back-reference
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(Pattern::compile("(unclosed", error));
}

// The patterns that crashed std::regex (its recursive matcher's stack) on a
// long line: a 1 MiB line is matched or not, and the harness goes on.
TEST(Pattern, AMebibyteLineWithPatternsThatCrashedBacktracking) {
  const std::string xs(1 << 20, 'x');
  EXPECT_FALSE(compiled("[a-z ]*listening").found_in(xs));
  EXPECT_FALSE(compiled("(x|y)+z").found_in(xs));
  EXPECT_TRUE(compiled("(x|y)+z").found_in(xs + "z"));
  EXPECT_FALSE(compiled("(a|b)*c").found_in(std::string(1 << 20, 'a')));
}

}  // namespace
}  // namespace mh
