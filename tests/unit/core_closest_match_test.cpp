// The one "did you mean" rule (core/text.hpp): the nearest candidate, suggested when the
// distance is at most about a third of the word and leaves part of it.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/text.hpp"

namespace {

using fracmfg::detail::closest_match;
using fracmfg::detail::edit_distance;

TEST(ClosestMatch, EditDistanceCountsAnAdjacentTranspositionAsOne) {
  EXPECT_EQ(edit_distance("cdua", "cuda"), 1u);
  EXPECT_EQ(edit_distance("pionts", "points"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(ClosestMatch, SuggestsTheNearestLikelyTypo) {
  const std::vector<std::string> keys = {"problem", "mfg", "fode", "fpde", "execution"};
  EXPECT_EQ(closest_match("problme", keys), "problem");
  EXPECT_EQ(closest_match("exection", keys), "execution");
  EXPECT_EQ(closest_match("mgf", keys), "mfg");
  EXPECT_EQ(closest_match("sine", {"sin", "cos"}), "sin");
  EXPECT_EQ(closest_match("y3", {"t", "y1", "y2"}), "y1");  // the first of equally near ones
}

TEST(ClosestMatch, RefusesWordsTooFarOffToBeTypos) {
  EXPECT_EQ(closest_match("z", {"x", "y"}), "");  // the whole word would change
  EXPECT_EQ(closest_match("frobnicate", {"floor", "sin", "exp"}), "");
  EXPECT_EQ(closest_match("xyz", {"cpu", "cuda", "auto"}), "");
  EXPECT_EQ(closest_match("anything", {}), "");
  // A third of the longer word: 2 edits in 6 letters pass, 3 do not.
  EXPECT_EQ(closest_match("pnoits", {"points"}), "points");
  EXPECT_EQ(closest_match("pxyzts", {"points"}), "");
}

TEST(ClosestMatch, CostIsLinearInTheLengthOfAHugeWord) {
  const std::string huge(10'000'000, 'a');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(closest_match(huge, {"problem", "mfg", "fode", "fpde", "execution"}), "");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.0);  // a quadratic comparison would take hours
}

}  // namespace
