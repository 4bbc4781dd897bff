// exec::RebalancePolicy: when the split of work changes (threshold, patience, cool-down,
// hysteresis), what it changes to (proportional to smoothed throughput) and what it refuses.
#include <gtest/gtest.h>
#include <petscsys.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/balance_policy.hpp"
#include "fracmfg/exec/partition.hpp"

namespace fe = fracmfg::exec;
using Reason = fe::RebalanceReason;

namespace {

// Per-rank step times of the model t_r = n_r * cost_r (cost in seconds per point).
std::vector<double> times_of(const std::vector<PetscInt>& points, const std::vector<double>& cost) {
  std::vector<double> t(points.size());
  for (std::size_t r = 0; r < t.size(); ++r) t[r] = static_cast<double>(points[r]) * cost[r];
  return t;
}

std::vector<PetscInt> even(PetscInt n, int p) {
  return fe::partition(std::vector<double>(static_cast<std::size_t>(p), 1.0), n);
}

}  // namespace

TEST(exec_balance_policy, DefaultOptionsAreTheDocumentedOnes) {
  const fe::RebalanceOptions o;
  EXPECT_TRUE(o.enabled);
  EXPECT_EQ(o.threshold, 0.2);
  EXPECT_EQ(o.patience, 2);
  EXPECT_EQ(o.cooldown, 3);
  EXPECT_EQ(o.hysteresis, 0.05);
  EXPECT_EQ(o.smoothing, 0.5);
  EXPECT_EQ(o.min_per_rank, 1);
}

TEST(exec_balance_policy, ImbalanceIsMaxOverMeanMinusOne) {
  EXPECT_DOUBLE_EQ(fe::imbalance({1.0, 2.0, 3.0}), 0.5);
  EXPECT_DOUBLE_EQ(fe::imbalance({2.0, 2.0}), 0.0);
  EXPECT_DOUBLE_EQ(fe::imbalance({4.0, 0.0}), 1.0);
  EXPECT_EQ(fe::imbalance({}), 0.0);
  EXPECT_EQ(fe::imbalance({7.0}), 0.0);
  EXPECT_EQ(fe::imbalance({0.0, 0.0, 0.0}), 0.0);
}

TEST(exec_balance_policy, InvalidOptionsAreRejected) {
  auto with = [](auto change) {
    fe::RebalanceOptions o;
    change(o);
    return o;
  };
  EXPECT_THROW(fe::RebalancePolicy(with([](auto& o) { o.threshold = -0.1; })), fracmfg::Error);
  EXPECT_THROW(fe::RebalancePolicy(with([](auto& o) { o.patience = 0; })), fracmfg::Error);
  EXPECT_THROW(fe::RebalancePolicy(with([](auto& o) { o.cooldown = -1; })), fracmfg::Error);
  EXPECT_THROW(fe::RebalancePolicy(with([](auto& o) { o.hysteresis = -1e-3; })), fracmfg::Error);
  EXPECT_THROW(fe::RebalancePolicy(with([](auto& o) { o.smoothing = 0.0; })), fracmfg::Error);
  EXPECT_THROW(fe::RebalancePolicy(with([](auto& o) { o.smoothing = 1.5; })), fracmfg::Error);
  EXPECT_THROW(fe::RebalancePolicy(with([](auto& o) { o.min_per_rank = -1; })), fracmfg::Error);
  EXPECT_THROW(fe::RebalancePolicy({}, fe::RebalanceLayout::grid_2d(0, 1, 4, 4)), fracmfg::Error);
  fe::RebalanceLayout bad;
  bad.dim = 4;
  EXPECT_THROW(fe::RebalancePolicy({}, bad), fracmfg::Error);
  EXPECT_THROW(fe::RebalancePolicy({}, fe::RebalanceLayout::grid_3d(1, 1, 0, 4, 4, 4)),
               fracmfg::Error);
  EXPECT_THROW(fe::RebalancePolicy({}, fe::RebalanceLayout::grid_3d(1, 1, 1, 4, 4, 0)),
               fracmfg::Error);
  fe::RebalanceLayout flat = fe::RebalanceLayout::grid_2d(1, 1, 4, 4);
  flat.pz = 2;  // a 2D layout split along z
  EXPECT_THROW(fe::RebalancePolicy({}, flat), fracmfg::Error);
}

TEST(exec_balance_policy, BalancedLoadNeverTriggers) {
  for (int p : {2, 3, 5}) {
    fe::RebalancePolicy policy;
    const std::vector<PetscInt> points = even(301, p);  // not divisible: rounding imbalance
    const std::vector<double> cost(static_cast<std::size_t>(p), 2e-6);
    for (int k = 0; k < 50; ++k) {
      const fe::RebalanceDecision& d = policy.observe(times_of(points, cost), points);
      EXPECT_FALSE(d.resplit);
      EXPECT_EQ(d.reason, Reason::balanced);
      EXPECT_LT(d.imbalance, 0.02);
    }
    EXPECT_EQ(policy.resplits(), 0);
    EXPECT_EQ(policy.observations(), 50);
  }
}

TEST(exec_balance_policy, SpeedsOneTwoThreeResplitAfterPatienceProportionalToThroughput) {
  fe::RebalancePolicy policy;
  const std::vector<double> cost = {1e-6, 2e-6, 3e-6};  // rank r is (r+1) times slower
  const PetscInt n = 300;
  std::vector<PetscInt> points = even(n, 3);
  const fe::RebalanceDecision first = policy.observe(times_of(points, cost), points);
  EXPECT_DOUBLE_EQ(first.imbalance, 0.5);  // times 100:200:300
  EXPECT_EQ(first.reason, Reason::waiting);
  EXPECT_FALSE(first.resplit);
  const fe::RebalanceDecision second = policy.observe(times_of(points, cost), points);
  ASSERT_TRUE(second.resplit);
  EXPECT_EQ(second.reason, Reason::resplit);
  ASSERT_EQ(second.counts.size(), 3u);
  EXPECT_EQ(second.lx, second.counts);
  EXPECT_TRUE(second.ly.empty());
  EXPECT_EQ(std::accumulate(second.counts.begin(), second.counts.end(), PetscInt{0}), n);
  // Throughputs are exact (the model has no noise): 1e6, 5e5, 3.33e5 points/s.
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_NEAR(second.throughputs[r], 1.0 / cost[r], 1e-6 / cost[r]);
  }
  const double sum = std::accumulate(second.throughputs.begin(), second.throughputs.end(), 0.0);
  for (std::size_t r = 0; r < 3; ++r) {
    const double ideal = static_cast<double>(n) * second.throughputs[r] / sum;
    EXPECT_LT(std::abs(static_cast<double>(second.counts[r]) - ideal), 1.0) << "rank " << r;
  }
  EXPECT_GT(second.counts[0], second.counts[1]);
  EXPECT_GT(second.counts[1], second.counts[2]);
  EXPECT_NEAR(second.predicted_current, 0.5, 1e-12);
  EXPECT_LT(second.predicted_new, 0.02);

  // The new split is balanced: no further re-split, however long it runs.
  points = second.counts;
  for (int k = 0; k < 30; ++k) {
    const fe::RebalanceDecision& d = policy.observe(times_of(points, cost), points);
    EXPECT_FALSE(d.resplit) << "observation " << d.observation;
    EXPECT_LT(d.imbalance, 0.02);
  }
  EXPECT_EQ(policy.resplits(), 1);
}

TEST(exec_balance_policy, ImbalanceEqualToThresholdDoesNotCount) {
  fe::RebalanceOptions o;
  o.threshold = 0.25;
  o.patience = 1;
  fe::RebalancePolicy policy(o);
  const std::vector<PetscInt> points = {100, 100};
  for (int k = 0; k < 5; ++k) {
    const fe::RebalanceDecision& d = policy.observe({1.25, 0.75}, points);  // exactly 0.25
    EXPECT_EQ(d.imbalance, 0.25);
    EXPECT_EQ(d.reason, Reason::balanced);
  }
  const fe::RebalanceDecision& d = policy.observe({1.5, 0.5}, points);
  EXPECT_TRUE(d.resplit);
}

TEST(exec_balance_policy, PatienceNeedsConsecutiveImbalancedObservations) {
  fe::RebalanceOptions o;
  o.patience = 3;
  fe::RebalancePolicy policy(o);
  const std::vector<PetscInt> points = {100, 100};
  const std::vector<double> slow = {1.0, 2.0};  // imbalance 1/3
  const std::vector<double> fine = {1.0, 1.1};  // imbalance 0.048
  // Imbalanced twice, then balanced: the count starts again, five times over.
  for (int round = 0; round < 5; ++round) {
    EXPECT_EQ(policy.observe(slow, points).reason, Reason::waiting);
    EXPECT_EQ(policy.streak(), 1);
    EXPECT_EQ(policy.observe(slow, points).reason, Reason::waiting);
    EXPECT_EQ(policy.streak(), 2);
    EXPECT_EQ(policy.observe(fine, points).reason, Reason::balanced);
    EXPECT_EQ(policy.streak(), 0);
  }
  EXPECT_EQ(policy.resplits(), 0);
  EXPECT_FALSE(policy.observe(slow, points).resplit);
  EXPECT_FALSE(policy.observe(slow, points).resplit);
  EXPECT_TRUE(policy.observe(slow, points).resplit);
  EXPECT_EQ(policy.resplits(), 1);
}

TEST(exec_balance_policy, CooldownSuppressesTriggersAfterAResplit) {
  fe::RebalanceOptions o;
  o.cooldown = 4;
  o.patience = 2;
  fe::RebalancePolicy policy(o);
  const std::vector<double> cost_a = {1e-6, 3e-6};
  const std::vector<double> cost_b = {3e-6, 1e-6};  // the speeds swap after the re-split
  std::vector<PetscInt> points = {500, 500};
  policy.observe(times_of(points, cost_a), points);
  const fe::RebalanceDecision d = policy.observe(times_of(points, cost_a), points);
  ASSERT_TRUE(d.resplit);
  EXPECT_EQ(policy.cooldown_left(), 4);
  points = d.counts;  // rank 0 now owns most; with swapped speeds it is far too slow
  for (int k = 0; k < 4; ++k) {
    const fe::RebalanceDecision& c = policy.observe(times_of(points, cost_b), points);
    EXPECT_GT(c.imbalance, 0.5);
    EXPECT_EQ(c.reason, Reason::cooling_down);
    EXPECT_FALSE(c.resplit);
    EXPECT_EQ(policy.cooldown_left(), 3 - k);
    EXPECT_EQ(policy.streak(), 0);
  }
  // After the cool-down the trigger needs its full patience again.
  EXPECT_EQ(policy.observe(times_of(points, cost_b), points).reason, Reason::waiting);
  const fe::RebalanceDecision& again = policy.observe(times_of(points, cost_b), points);
  ASSERT_TRUE(again.resplit);
  EXPECT_LT(again.counts[0], again.counts[1]);  // rank 1 is now the fast one
  EXPECT_EQ(policy.resplits(), 2);
}

TEST(exec_balance_policy, HysteresisBlocksResplitsThatGainTooLittle) {
  // Times per point 1 : 1.25 on an even split: imbalance 1/9 (above threshold 0.1); the
  // proportional split 56 : 44 predicts about 0.009, a gain of about 0.10.
  const std::vector<double> cost = {1e-6, 1.25e-6};
  const std::vector<PetscInt> points = {50, 50};
  fe::RebalanceOptions o;
  o.threshold = 0.1;
  o.patience = 1;
  o.hysteresis = 0.2;
  fe::RebalancePolicy strict(o);
  for (int k = 0; k < 10; ++k) {
    const fe::RebalanceDecision& d = strict.observe(times_of(points, cost), points);
    EXPECT_EQ(d.reason, Reason::no_gain);
    EXPECT_FALSE(d.resplit);
    EXPECT_NEAR(d.predicted_current, 1.0 / 9.0, 1e-12);
    EXPECT_GT(d.predicted_current - d.predicted_new, 0.09);
    EXPECT_LT(d.predicted_current - d.predicted_new, 0.2);
  }
  EXPECT_EQ(strict.resplits(), 0);
  o.hysteresis = 0.05;
  fe::RebalancePolicy loose(o);
  const fe::RebalanceDecision& d = loose.observe(times_of(points, cost), points);
  EXPECT_TRUE(d.resplit);
  EXPECT_EQ(d.counts, (std::vector<PetscInt>{56, 44}));
}

TEST(exec_balance_policy, ASplitThatRoundingCannotImproveIsNoGain) {
  // Three points on two equally fast ranks: 2 : 1 is as good as it gets (imbalance 1/3).
  fe::RebalanceOptions o;
  o.hysteresis = 0.0;
  fe::RebalancePolicy policy(o);
  const std::vector<PetscInt> points = {2, 1};
  for (int k = 0; k < 6; ++k) {
    const fe::RebalanceDecision& d = policy.observe({2.0, 1.0}, points);
    EXPECT_FALSE(d.resplit);
    if (k >= 1) {
      EXPECT_EQ(d.reason, Reason::no_gain);
      EXPECT_EQ(d.counts, points);
    }
  }
}

TEST(exec_balance_policy, SmallFluctuationsAroundBalanceDoNotResplit) {
  // Speeds 1:2:3 on their proportional split, each time perturbed by up to 2% (fixed
  // pattern). With a threshold of 0.01 the trigger fires often; the smoothed model shows
  // too little to gain, so the split stays.
  const std::vector<double> cost = {1e-6, 2e-6, 3e-6};
  const std::vector<PetscInt> points = fe::partition({1.0, 0.5, 1.0 / 3.0}, 6000);
  auto run = [&](double hysteresis, int cooldown, int* no_gain) {
    fe::RebalanceOptions o;
    o.threshold = 0.01;
    o.patience = 1;
    o.hysteresis = hysteresis;
    o.cooldown = cooldown;
    fe::RebalancePolicy policy(o);
    std::vector<PetscInt> current = points;
    for (int k = 0; k < 200; ++k) {
      std::vector<double> t = times_of(current, cost);
      for (std::size_t r = 0; r < t.size(); ++r) {
        t[r] *= 1.0 + 0.02 * std::sin(1.7 * k + 2.3 * static_cast<double>(r));
      }
      const fe::RebalanceDecision& d = policy.observe(t, current);
      if (d.reason == Reason::no_gain) ++*no_gain;
      if (d.resplit) current = d.counts;
    }
    return policy.resplits();
  };
  int no_gain = 0;
  EXPECT_EQ(run(0.05, 3, &no_gain), 0);
  EXPECT_GT(no_gain, 20);  // the trigger did fire; hysteresis held it
  // Without hysteresis and cool-down the same noise moves the split back and forth.
  int unused = 0;
  EXPECT_GT(run(0.0, 0, &unused), 5);
}

TEST(exec_balance_policy, ThroughputIsAnExponentialMovingAverage) {
  fe::RebalanceOptions o;
  o.smoothing = 0.25;
  fe::RebalancePolicy policy(o);
  policy.observe({1.0, 2.0}, {100, 100});
  EXPECT_DOUBLE_EQ(policy.throughputs()[0], 100.0);
  EXPECT_DOUBLE_EQ(policy.throughputs()[1], 50.0);
  policy.observe({0.5, 2.0}, {100, 40});
  EXPECT_DOUBLE_EQ(policy.throughputs()[0], 0.75 * 100.0 + 0.25 * 200.0);
  EXPECT_DOUBLE_EQ(policy.throughputs()[1], 0.75 * 50.0 + 0.25 * 20.0);
  // No points or no time: no information, no change.
  policy.observe({0.0, 3.0}, {100, 0});
  EXPECT_DOUBLE_EQ(policy.throughputs()[0], 125.0);
  EXPECT_DOUBLE_EQ(policy.throughputs()[1], 42.5);
}

TEST(exec_balance_policy, ARankWithoutThroughputGivesNoData) {
  fe::RebalanceOptions o;
  o.patience = 1;
  fe::RebalancePolicy policy(o);
  const fe::RebalanceDecision& d = policy.observe({1.0, 0.0}, {100, 0});
  EXPECT_GT(d.imbalance, 0.2);
  EXPECT_EQ(d.reason, Reason::no_data);
  EXPECT_FALSE(d.resplit);
  EXPECT_EQ(policy.throughputs()[1], 0.0);
}

TEST(exec_balance_policy, OneRankNeverResplits) {
  fe::RebalancePolicy policy;
  for (int k = 0; k < 20; ++k) {
    const fe::RebalanceDecision& d = policy.observe({1.0 + k}, {1000});
    EXPECT_EQ(d.reason, Reason::single_rank);
    EXPECT_FALSE(d.resplit);
    EXPECT_EQ(d.imbalance, 0.0);
  }
  EXPECT_EQ(policy.resplits(), 0);
}

TEST(exec_balance_policy, DisabledPolicyOnlyMeasures) {
  fe::RebalanceOptions o;
  o.enabled = false;
  fe::RebalancePolicy policy(o);
  for (int k = 0; k < 10; ++k) {
    const fe::RebalanceDecision& d = policy.observe({1.0, 5.0}, {100, 100});
    EXPECT_EQ(d.reason, Reason::disabled);
    EXPECT_NEAR(d.imbalance, 5.0 / 3.0 - 1.0, 1e-15);
  }
  EXPECT_EQ(policy.resplits(), 0);
  EXPECT_DOUBLE_EQ(policy.throughputs()[1], 20.0);
}

TEST(exec_balance_policy, TwoDimensionalLayoutProposesTensorProductRanges) {
  // 2 x 2 process grid, rank r = i + 2 j; column 1 is twice as fast as column 0.
  const PetscInt nx = 40;
  const PetscInt ny = 20;
  fe::RebalancePolicy policy({}, fe::RebalanceLayout::grid_2d(2, 2, nx, ny));
  const std::vector<PetscInt> points = {200, 200, 200, 200};  // lx = ly = even
  const std::vector<double> cost = {2e-6, 1e-6, 2e-6, 1e-6};
  policy.observe(times_of(points, cost), points);
  const fe::RebalanceDecision& d = policy.observe(times_of(points, cost), points);
  ASSERT_TRUE(d.resplit);
  ASSERT_EQ(d.lx.size(), 2u);
  ASSERT_EQ(d.ly.size(), 2u);
  EXPECT_EQ(d.lx[0] + d.lx[1], nx);
  EXPECT_EQ(d.ly, (std::vector<PetscInt>{10, 10}));
  EXPECT_LT(std::abs(static_cast<double>(d.lx[1]) - 2.0 * nx / 3.0), 1.0);
  for (std::size_t j = 0; j < 2; ++j) {
    for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(d.counts[i + 2 * j], d.lx[i] * d.ly[j]);
  }
  EXPECT_LT(d.predicted_new, d.predicted_current - 0.05);
}

TEST(exec_balance_policy, ThreeDimensionalLayoutProposesTensorProductRanges) {
  // 1 x 2 x 3 process grid, rank r = i + px (j + py k) = j + 2 k; the ranks of slab k = 2
  // are three times as fast as the others, and rank speeds do not depend on j.
  const PetscInt nx = 6, ny = 10, nz = 30;
  fe::RebalancePolicy policy({}, fe::RebalanceLayout::grid_3d(1, 2, 3, nx, ny, nz));
  const std::vector<PetscInt> points(6, nx * 5 * 10);  // ly = 5 5, lz = 10 10 10
  const std::vector<double> cost = {3e-6, 3e-6, 3e-6, 3e-6, 1e-6, 1e-6};
  EXPECT_FALSE(policy.observe(times_of(points, cost), points).resplit);
  const fe::RebalanceDecision& d = policy.observe(times_of(points, cost), points);
  ASSERT_TRUE(d.resplit);
  EXPECT_EQ(d.lx, (std::vector<PetscInt>{6}));
  EXPECT_EQ(d.ly, (std::vector<PetscInt>{5, 5}));
  EXPECT_EQ(d.lz, (std::vector<PetscInt>{6, 6, 18}));  // slab weights 1 : 1 : 3
  for (std::size_t k = 0; k < 3; ++k) {
    for (std::size_t j = 0; j < 2; ++j) {
      EXPECT_EQ(d.counts[j + 2 * k], d.lx[0] * d.ly[j] * d.lz[k]);
    }
  }
  EXPECT_LT(d.predicted_new, 1e-12);
  // Observations must cover the whole 3D grid on 6 ranks.
  EXPECT_THROW(policy.observe({1, 1, 1, 1, 1, 1}, {300, 300, 300, 300, 300, 299}), fracmfg::Error);
  EXPECT_THROW(policy.observe({1, 1, 1}, {600, 600, 600}), fracmfg::Error);
}

TEST(exec_balance_policy, InvalidObservationsThrowAndChangeNothing) {
  fe::RebalancePolicy policy;
  policy.observe({1.0, 1.0}, {10, 10});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(policy.observe({1.0, nan}, {10, 10}), fracmfg::Error);
  EXPECT_THROW(policy.observe({1.0, -1.0}, {10, 10}), fracmfg::Error);
  EXPECT_THROW(policy.observe({1.0, 1.0}, {10, -1}), fracmfg::Error);
  EXPECT_THROW(policy.observe({1.0, 1.0}, {10}), fracmfg::Error);
  EXPECT_THROW(policy.observe({1.0, 1.0, 1.0}, {10, 10, 10}), fracmfg::Error);  // p changed
  EXPECT_THROW(policy.observe({}, {}), fracmfg::Error);
  EXPECT_EQ(policy.observations(), 1);
  EXPECT_DOUBLE_EQ(policy.throughputs()[0], 10.0);

  fe::RebalancePolicy grid({}, fe::RebalanceLayout::grid_2d(2, 1, 10, 3));
  EXPECT_THROW(grid.observe({1.0, 1.0}, {15, 16}), fracmfg::Error);           // 31 != 30
  EXPECT_THROW(grid.observe({1.0, 1.0, 1.0}, {10, 10, 10}), fracmfg::Error);  // 3 != 2 x 1
  EXPECT_EQ(grid.observations(), 0);
}

TEST(exec_balance_policy, ResetForgetsHistory) {
  fe::RebalancePolicy policy;
  policy.observe({1.0, 3.0}, {10, 10});
  policy.observe({1.0, 3.0}, {10, 10});
  EXPECT_EQ(policy.resplits(), 1);
  policy.reset();
  EXPECT_EQ(policy.resplits(), 0);
  EXPECT_EQ(policy.observations(), 0);
  EXPECT_TRUE(policy.throughputs().empty());
  EXPECT_EQ(policy.cooldown_left(), 0);
  // A different rank count is accepted after reset.
  EXPECT_EQ(policy.observe({1.0, 1.0, 1.0}, {5, 5, 5}).reason, Reason::balanced);
}

TEST(exec_balance_policy, SameSequenceGivesSameDecisions) {
  fe::RebalancePolicy a;
  fe::RebalancePolicy b;
  std::vector<PetscInt> pa = {70, 70, 70};
  std::vector<PetscInt> pb = pa;
  for (int k = 0; k < 40; ++k) {
    const std::vector<double> cost = {1e-6 * (1.0 + 0.3 * std::sin(0.4 * k)), 2e-6, 1.5e-6};
    const fe::RebalanceDecision& da = a.observe(times_of(pa, cost), pa);
    const fe::RebalanceDecision& db = b.observe(times_of(pb, cost), pb);
    EXPECT_EQ(da.resplit, db.resplit);
    EXPECT_EQ(da.reason, db.reason);
    EXPECT_EQ(da.counts, db.counts);
    if (da.resplit) pa = da.counts;
    if (db.resplit) pb = db.counts;
  }
  EXPECT_EQ(a.resplits(), b.resplits());
  EXPECT_GE(a.resplits(), 1);
}

TEST(exec_balance_policy, ReasonsHaveNames) {
  EXPECT_STREQ(fe::to_string(Reason::no_gain), "no_gain");
  EXPECT_STREQ(fe::to_string(Reason::resplit), "resplit");
  EXPECT_STREQ(fe::to_string(Reason::cooling_down), "cooling_down");
  EXPECT_STREQ(fe::to_string(Reason::single_rank), "single_rank");
  EXPECT_STREQ(fe::to_string(Reason::not_worth), "not_worth");
}

// Step 7: a re-split whose predicted saving over the run's remaining observations is below
// the recorded cost of the last one is not worth it; without a cost or a horizon the rule
// is as before.
TEST(exec_balance_policy, AResplitMustPayForItsRecordedCost) {
  fe::RebalanceOptions o;
  o.patience = 1;
  o.cooldown = 0;
  const std::vector<double> cost = {1e-3, 2e-3};  // seconds per point: rank 1 twice as slow
  const std::vector<PetscInt> points = {100, 100};
  // Times 0.1 s and 0.2 s; the proposal 133/67 makes the slowest rank's time 0.134 s:
  // a saving of 0.2 - 4/30 = 0.0667 s per observation.
  const double saving = 0.2 - 2e-3 * 200.0 / 3.0;
  {
    fe::RebalancePolicy policy(o);
    policy.record_cost(1.0);  // 15 observations pay for it
    const fe::RebalanceDecision& few = policy.observe(times_of(points, cost), points, 10.0);
    EXPECT_EQ(few.reason, Reason::not_worth);
    EXPECT_FALSE(few.resplit);
    EXPECT_NEAR(few.predicted_saving, saving, 2e-3);
    EXPECT_DOUBLE_EQ(few.horizon, 10.0);
    EXPECT_DOUBLE_EQ(few.expected_cost, 1.0);
    EXPECT_FALSE(few.counts.empty());  // the proposal is reported with the refusal
    EXPECT_EQ(policy.resplits(), 0);
    const fe::RebalanceDecision& many = policy.observe(times_of(points, cost), points, 20.0);
    EXPECT_EQ(many.reason, Reason::resplit);
    EXPECT_TRUE(many.resplit);
    EXPECT_EQ(many.counts, (std::vector<PetscInt>{133, 67}));
  }
  {
    // Unknown horizon: the cost is not weighed.
    fe::RebalancePolicy policy(o);
    policy.record_cost(1e6);
    EXPECT_TRUE(policy.observe(times_of(points, cost), points).resplit);
  }
  {
    // No cost recorded yet (the first re-split): a horizon alone does not block.
    fe::RebalancePolicy policy(o);
    EXPECT_LT(policy.cost(), 0.0);
    const fe::RebalanceDecision& d = policy.observe(times_of(points, cost), points, 0.0);
    EXPECT_TRUE(d.resplit);
    EXPECT_LT(d.expected_cost, 0.0);
  }
  {
    // A horizon of zero observations never pays for a known cost, however cheap.
    fe::RebalancePolicy policy(o);
    policy.record_cost(0.0);
    EXPECT_EQ(policy.observe(times_of(points, cost), points, 0.0).reason, Reason::not_worth);
    EXPECT_TRUE(policy.observe(times_of(points, cost), points, 1.0).resplit);
  }
}

TEST(exec_balance_policy, RecordedCostsAndHorizonsAreChecked) {
  fe::RebalancePolicy policy;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(policy.record_cost(-1.0), fracmfg::Error);
  EXPECT_THROW(policy.record_cost(nan), fracmfg::Error);
  EXPECT_THROW(policy.record_cost(std::numeric_limits<double>::infinity()), fracmfg::Error);
  EXPECT_LT(policy.cost(), 0.0);
  EXPECT_THROW(policy.observe({1.0, 1.0}, {10, 10}, nan), fracmfg::Error);
  EXPECT_EQ(policy.observations(), 0);
  policy.record_cost(0.5);
  EXPECT_DOUBLE_EQ(policy.cost(), 0.5);
  policy.reset();
  EXPECT_LT(policy.cost(), 0.0);
}
