// la::dense_lu_solve (src/la/dense_lu.hpp): LAPACK's LU with partial pivoting on row-major
// arrays; solutions to round-off, the column of the first zero or non-finite pivot.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "la/dense_lu.hpp"

namespace {

using fracmfg::la::dense_lu_solve;

TEST(DenseLu, SolvesARowMajorSystemThatNeedsPivoting) {
  // a_00 = 0 needs a row exchange; a is not symmetric, so a transposed solve would differ.
  const std::vector<double> a = {0.0, 2.0, 1.0,  //
                                 1.0, 1.0, 0.0,  //
                                 3.0, 0.0, 4.0};
  const std::vector<double> x = {1.0, -2.0, 0.5};
  std::vector<double> b(3, 0.0);
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < 3; ++j) b[i] += a[i * 3 + j] * x[j];
  }
  const std::vector<double> a_before = a;
  ASSERT_EQ(dense_lu_solve(3, a.data(), b.data()), -1);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(b[i], x[i], 1e-15) << i;
  EXPECT_EQ(a, a_before);  // the matrix is left as it was
}

TEST(DenseLu, SolutionOfALargerSystemIsExactToRoundOff) {
  const std::size_t n = 40;
  std::vector<double> a(n * n), x(n), b(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = std::sin(1.0 + static_cast<double>(i));
    for (std::size_t j = 0; j < n; ++j) {
      a[i * n + j] = 1.0 / (1.0 + static_cast<double>(i + 2 * j)) + (i == j ? 2.0 : 0.0);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) b[i] += a[i * n + j] * x[j];
  }
  ASSERT_EQ(dense_lu_solve(n, a.data(), b.data()), -1);
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(b[i], x[i], 1e-13) << i;
}

TEST(DenseLu, NamesTheColumnOfTheFirstZeroPivot) {
  const std::vector<double> zero_first = {0.0, 1.0, 0.0, 1.0};  // column 0 is zero
  std::vector<double> b = {1.0, 1.0};
  EXPECT_EQ(dense_lu_solve(2, zero_first.data(), b.data()), 0);
  const std::vector<double> rank_one = {1.0, 2.0, 2.0, 4.0};
  b = {1.0, 1.0};
  EXPECT_EQ(dense_lu_solve(2, rank_one.data(), b.data()), 1);
  const std::vector<double> with_nan = {std::numeric_limits<double>::quiet_NaN(), 1.0, 0.0, 1.0};
  b = {1.0, 1.0};
  EXPECT_GE(dense_lu_solve(2, with_nan.data(), b.data()), 0);
  EXPECT_EQ(dense_lu_solve(0, nullptr, nullptr), -1);
}

}  // namespace
