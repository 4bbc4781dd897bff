// exec::partition / apportion: ownership counts proportional to speed, exact sums, bounds.
#include <gtest/gtest.h>
#include <petscsys.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/partition.hpp"

namespace fe = fracmfg::exec;

TEST(exec_partition, EqualWeightsGivePetscsEvenSplit) {
  for (PetscInt n : {1, 7, 10, 11, 100, 1001, 65536}) {
    for (int p : {1, 2, 3, 4, 7, 16}) {
      if (n < p) continue;
      const auto c = fe::partition(std::vector<double>(static_cast<std::size_t>(p), 2.5), n);
      ASSERT_EQ(c.size(), static_cast<std::size_t>(p));
      for (int i = 0; i < p; ++i) {
        // DMDA's own split (DMSetUp_DA_1D/2D): n/p each, the first n%p ranks one more.
        EXPECT_EQ(c[static_cast<std::size_t>(i)], n / p + ((n % p) > i ? 1 : 0))
            << "n=" << n << " p=" << p << " i=" << i;
      }
    }
  }
}

TEST(exec_partition, CountsAreProportionalToWeights) {
  EXPECT_EQ(fe::partition({1, 2, 3, 4}, 100), (std::vector<PetscInt>{10, 20, 30, 40}));
  // 2.5 / 2.5 / 5: the tie between equal remainders goes to the lower rank.
  EXPECT_EQ(fe::partition({1, 1, 2}, 10), (std::vector<PetscInt>{3, 2, 5}));
  // Largest remainder: 7 * (0.5, 0.3, 0.2) = 3.5, 2.1, 1.4 -> 3+1, 2, 1.
  EXPECT_EQ(fe::partition({5, 3, 2}, 7), (std::vector<PetscInt>{4, 2, 1}));
}

TEST(exec_partition, SumIsExactAndEachCountWithinOneOfItsShare) {
  std::mt19937 gen(42);
  std::uniform_real_distribution<double> speed(0.5, 4.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int p = 1 + trial % 13;
    std::vector<double> w(static_cast<std::size_t>(p));
    for (double& x : w) x = speed(gen);
    const PetscInt n = static_cast<PetscInt>(50 * p + trial * 37);
    const auto c = fe::partition(w, n, 1);
    const double total_w = std::accumulate(w.begin(), w.end(), 0.0);
    EXPECT_EQ(std::accumulate(c.begin(), c.end(), PetscInt{0}), n);
    for (int i = 0; i < p; ++i) {
      const double share = static_cast<double>(n) * w[static_cast<std::size_t>(i)] / total_w;
      EXPECT_LT(std::abs(static_cast<double>(c[static_cast<std::size_t>(i)]) - share), 1.0)
          << "trial " << trial << " rank " << i;
    }
  }
}

TEST(exec_partition, MinimumPerRankIsHeldAndTheRestRescaled) {
  EXPECT_EQ(fe::partition({1, 1000}, 100, 10), (std::vector<PetscInt>{10, 90}));
  EXPECT_EQ(fe::partition({1, 1000, 1000}, 100, 10), (std::vector<PetscInt>{10, 45, 45}));
  // Exactly p * min points: everyone gets the minimum.
  EXPECT_EQ(fe::partition({1, 5, 9}, 6, 2), (std::vector<PetscInt>{2, 2, 2}));
  // Minimum 0 lets a slow rank own nothing.
  EXPECT_EQ(fe::partition({1e-6, 1}, 5, 0), (std::vector<PetscInt>{0, 5}));
}

TEST(exec_partition, ApportionHonoursBothBounds) {
  // 10:1:1 into 9 with at most 4 each: the big part is held at 4, the rest split 2.5/2.5.
  EXPECT_EQ(fe::apportion({10, 1, 1}, 9, 1, 4), (std::vector<std::int64_t>{4, 3, 2}));
  EXPECT_EQ(fe::apportion({1, 1, 1}, 12, 0, 4), (std::vector<std::int64_t>{4, 4, 4}));
  EXPECT_THROW(fe::apportion({1, 1, 1}, 13, 0, 4), fracmfg::Error);
  EXPECT_THROW(fe::apportion({1, 1}, 5, 3, 2), fracmfg::Error);
  // Large totals stay exact.
  const std::int64_t big = 3'000'000'000'000LL;
  const auto c = fe::apportion({1, 2, 3}, big, 0);
  EXPECT_EQ(c[0] + c[1] + c[2], big);
  EXPECT_EQ(c[1], 1'000'000'000'000LL);
}

TEST(exec_partition, BadWeightsAreErrors) {
  EXPECT_THROW(fe::partition({}, 10), fracmfg::Error);
  EXPECT_THROW(fe::partition({1, 0, 1}, 10), fracmfg::Error);
  EXPECT_THROW(fe::partition({1, -2}, 10), fracmfg::Error);
  EXPECT_THROW(fe::partition({1, std::numeric_limits<double>::quiet_NaN()}, 10), fracmfg::Error);
  EXPECT_THROW(fe::partition({1, std::numeric_limits<double>::infinity()}, 10), fracmfg::Error);
}

TEST(exec_partition, TooFewPointsForTheMinimumIsAnError) {
  EXPECT_THROW(fe::partition({1, 1, 1}, 5, 2), fracmfg::Error);
  EXPECT_THROW(fe::partition({1, 1}, 1), fracmfg::Error);  // default minimum 1
  EXPECT_NO_THROW(fe::partition({1, 1}, 2));
  EXPECT_THROW(fe::partition({1, 1}, 4, -1), fracmfg::Error);
}

TEST(exec_partition, TwoDimensionalSplitFollowsRowAndColumnSpeeds) {
  // Speeds a_i * b_j with a = (1, 3), b = (1, 1, 2), PETSc rank order i + px * j.
  const std::vector<double> a{1, 3};
  const std::vector<double> b{1, 1, 2};
  std::vector<double> w;
  for (double bj : b) {
    for (double ai : a) w.push_back(ai * bj);
  }
  const fe::Partition2d p = fe::partition_2d(w, 2, 3, 40, 40);
  EXPECT_EQ(p.lx, (std::vector<PetscInt>{10, 30}));
  EXPECT_EQ(p.ly, (std::vector<PetscInt>{10, 10, 20}));

  // Equal speeds: PETSc's split in each direction.
  const fe::Partition2d even = fe::partition_2d(std::vector<double>(6, 1.0), 3, 2, 10, 7);
  EXPECT_EQ(even.lx, (std::vector<PetscInt>{4, 3, 3}));
  EXPECT_EQ(even.ly, (std::vector<PetscInt>{4, 3}));

  // A slow rank (0,0) slows its row and its column.
  const fe::Partition2d slow = fe::partition_2d({0.25, 1, 1, 1}, 2, 2, 70, 70);
  EXPECT_LT(slow.lx[0], slow.lx[1]);
  EXPECT_LT(slow.ly[0], slow.ly[1]);
  EXPECT_EQ(slow.lx[0] + slow.lx[1], 70);
  EXPECT_EQ(slow.ly[0] + slow.ly[1], 70);
}

TEST(exec_partition, ThreeDimensionalSplitFollowsTheSlabSpeeds) {
  // Speeds a_i b_j c_k with a = (1, 3), b = (1), c = (1, 1, 2) on a 2 x 1 x 3 process grid,
  // PETSc rank order i + px (j + py k): exact for a product of axis speeds.
  const std::vector<double> a{1, 3};
  const std::vector<double> c{1, 1, 2};
  std::vector<double> w;
  for (double ck : c) {
    for (double ai : a) w.push_back(ai * ck);
  }
  const auto l = fe::partition_grid(w, {2, 1, 3}, {40, 9, 40});
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0], (std::vector<PetscInt>{10, 30}));
  EXPECT_EQ(l[1], (std::vector<PetscInt>{9}));
  EXPECT_EQ(l[2], (std::vector<PetscInt>{10, 10, 20}));
  // Equal speeds: PETSc's split along every axis.
  const auto even = fe::partition_grid(std::vector<double>(12, 1.0), {3, 2, 2}, {10, 7, 5});
  EXPECT_EQ(even[0], (std::vector<PetscInt>{4, 3, 3}));
  EXPECT_EQ(even[1], (std::vector<PetscInt>{4, 3}));
  EXPECT_EQ(even[2], (std::vector<PetscInt>{3, 2}));
  // The 2D split is the same function on two axes.
  const fe::Partition2d two = fe::partition_2d({0.25, 1, 1, 1}, 2, 2, 70, 70);
  const auto grid = fe::partition_grid({0.25, 1, 1, 1}, {2, 2}, {70, 70});
  EXPECT_EQ(two.lx, grid[0]);
  EXPECT_EQ(two.ly, grid[1]);
  // Bad input.
  EXPECT_THROW(fe::partition_grid({1, 1}, {2, 1, 2}, {10, 10, 10}), fracmfg::Error);
  EXPECT_THROW(fe::partition_grid({1, 1}, {2, 1}, {10, 10, 10}), fracmfg::Error);
  EXPECT_THROW(fe::partition_grid({1, 1}, {2, 0, 1}, {10, 10, 10}), fracmfg::Error);
  EXPECT_THROW(fe::partition_grid({1, -1}, {2, 1, 1}, {10, 10, 10}), fracmfg::Error);
  EXPECT_THROW(fe::partition_grid({1, 1}, {1, 1, 2}, {10, 10, 1}), fracmfg::Error);
  EXPECT_THROW(fe::partition_grid({}, {}, {}), fracmfg::Error);
}

TEST(exec_partition, TwoDimensionalSplitChecksItsInput) {
  EXPECT_THROW(fe::partition_2d({1, 1, 1}, 2, 2, 10, 10), fracmfg::Error);
  EXPECT_THROW(fe::partition_2d({1, 0, 1, 1}, 2, 2, 10, 10), fracmfg::Error);
  EXPECT_THROW(fe::partition_2d({1, 1, 1, 1}, 2, 2, 1, 10), fracmfg::Error);
  EXPECT_THROW(fe::partition_2d({}, 0, 1, 10, 10), fracmfg::Error);
}
