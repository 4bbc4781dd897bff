// The grid split on a node with GPUs: the ranks are placed on the devices
// (exec::place_node), each rank's speed is modelled from its slot (a rank with a device is
// k times a core, scaled by the device's capability and divided among the ranks sharing
// it), the balance policy observes the step times of PETSc's even split at those speeds,
// and its proposal gives every rank a share in proportion to its speed: 4 GPUs / 8 ranks
// (one rank per device, the other four on cores; and two per device, all equal), 2 GPUs / 3
// ranks, unequal GPUs, and a 2D process grid.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fracmfg/exec/balance_policy.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/placement.hpp"

namespace fe = fracmfg::exec;

namespace {

constexpr double kGpuFactor = 5.0;  // a rank alone on the reference device, in cores

fe::Hardware node_with(const std::vector<int>& multiprocessors) {
  std::string yaml = "host_name: n\ncuda_compiled: true\n";
  if (!multiprocessors.empty()) yaml += "gpus:\n";
  for (int mp : multiprocessors) {
    yaml +=
        "  - {name: g, cc: \"8.0\", multiprocessors: " + std::to_string(mp) + ", memory_gb: 16}\n";
  }
  return fe::Hardware::from_yaml(yaml, "node.yaml");
}

// Speed of each node-local rank from its slot, relative to one core.
std::vector<double> speeds_of(const fe::Hardware& hw, int ranks, int max_per_gpu) {
  std::vector<double> s;
  const double reference = fe::device_score(hw.gpus.at(0));
  for (const fe::DeviceSlot& slot : fe::place_node(hw, ranks, max_per_gpu)) {
    if (slot.on_cpu()) {
      s.push_back(1.0);
    } else {
      s.push_back(kGpuFactor * fe::device_score(hw.gpus[static_cast<std::size_t>(slot.gpu_index)]) /
                  reference / slot.sharing);
    }
  }
  return s;
}

// PETSc's even split of n over p ranks.
std::vector<PetscInt> even(PetscInt n, int p) {
  std::vector<PetscInt> c(static_cast<std::size_t>(p), n / p);
  for (int r = 0; r < n % p; ++r) ++c[static_cast<std::size_t>(r)];
  return c;
}

// One observation of the even split at the given speeds; the decision.
fe::RebalanceDecision observe_even(const std::vector<double>& speeds, PetscInt n,
                                   fe::RebalanceLayout layout = fe::RebalanceLayout::contiguous(),
                                   std::vector<PetscInt> counts = {}, double threshold = 0.2) {
  fe::RebalanceOptions o;
  o.patience = 1;
  o.threshold = threshold;
  fe::RebalancePolicy policy(o, layout);
  if (counts.empty()) counts = even(n, static_cast<int>(speeds.size()));
  std::vector<double> seconds;
  for (std::size_t r = 0; r < speeds.size(); ++r) {
    seconds.push_back(static_cast<double>(counts[r]) / speeds[r]);
  }
  return policy.observe(seconds, counts);
}

// Each count within `slack` of its share n s_r / sum s.
void expect_proportional(const std::vector<PetscInt>& counts, const std::vector<double>& speeds,
                         PetscInt n, double slack) {
  ASSERT_EQ(counts.size(), speeds.size());
  double total = 0.0;
  for (double s : speeds) total += s;
  PetscInt sum = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    const double share = static_cast<double>(n) * speeds[r] / total;
    EXPECT_LE(std::fabs(static_cast<double>(counts[r]) - share), slack)
        << "rank " << r << ": " << counts[r] << " points, share " << share;
    sum += counts[r];
  }
  EXPECT_EQ(sum, n);
}

}  // namespace

TEST(exec_gpu_split, FourGpusEightRanksOneRankPerDevice) {
  const fe::Hardware hw = node_with({108, 108, 108, 108});
  const std::vector<double> speeds = speeds_of(hw, 8, 1);
  EXPECT_EQ(speeds, (std::vector<double>{5, 5, 5, 5, 1, 1, 1, 1}));
  const PetscInt n = 100000;
  const fe::RebalanceDecision d = observe_even(speeds, n);
  EXPECT_TRUE(d.resplit);
  EXPECT_NEAR(d.imbalance, 5.0 / 3.0 - 1.0, 1e-12);  // the cpu ranks take 5x the gpu ranks
  expect_proportional(d.counts, speeds, n, 1.0);
  EXPECT_EQ(d.counts[0], 20833);  // 100000 x 5 / 24
  EXPECT_EQ(d.counts[7], 4167);
}

TEST(exec_gpu_split, FourGpusEightRanksTwoPerDeviceStayEven) {
  const fe::Hardware hw = node_with({108, 108, 108, 108});
  const std::vector<double> speeds = speeds_of(hw, 8, 2);
  for (double s : speeds) EXPECT_DOUBLE_EQ(s, kGpuFactor / 2);
  const fe::RebalanceDecision d = observe_even(speeds, 80000);
  EXPECT_FALSE(d.resplit);
  EXPECT_EQ(d.reason, fe::RebalanceReason::balanced);
}

TEST(exec_gpu_split, TwoGpusThreeRanks) {
  const fe::Hardware hw = node_with({108, 108});
  const std::vector<double> speeds = speeds_of(hw, 3, 1);
  EXPECT_EQ(speeds, (std::vector<double>{5, 5, 1}));
  const PetscInt n = 1100;
  const fe::RebalanceDecision d = observe_even(speeds, n);
  ASSERT_TRUE(d.resplit);
  EXPECT_EQ(d.counts, (std::vector<PetscInt>{500, 500, 100}));
}

TEST(exec_gpu_split, UnequalGpusGetSharesByCapability) {
  // Device 0 has twice the multiprocessors of device 1: 4 ranks are placed 3 / 1 (in
  // proportion to the scores), so the ranks on device 0 each get a third of it and the one
  // on device 1 all of a device of half the capability.
  const fe::Hardware hw = node_with({108, 54});
  EXPECT_EQ(fe::ranks_per_gpu(hw, 4, 0), (std::vector<int>{3, 1}));
  const std::vector<double> speeds = speeds_of(hw, 4, 0);
  EXPECT_NEAR(speeds[0], kGpuFactor / 3, 1e-12);
  EXPECT_NEAR(speeds[3], kGpuFactor / 2, 1e-12);
  const PetscInt n = 9000;
  // The even split is only 9% off (device 1's rank waits for device 0's): below the default
  // threshold nothing moves; with a threshold of 5% the split follows the speeds.
  const fe::RebalanceDecision d = observe_even(speeds, n);
  EXPECT_FALSE(d.resplit);
  EXPECT_NEAR(d.imbalance, 1350.0 / 1237.5 - 1.0, 1e-12);
  const fe::RebalanceDecision tight =
      observe_even(speeds, n, fe::RebalanceLayout::contiguous(), {}, 0.05);
  ASSERT_TRUE(tight.resplit);
  expect_proportional(tight.counts, speeds, n, 1.0);
  // With a cap of one rank per device, two ranks get a GPU of unequal speed, two a core.
  const std::vector<double> capped = speeds_of(hw, 4, 1);
  EXPECT_EQ(capped, (std::vector<double>{5, 2.5, 1, 1}));
  const fe::RebalanceDecision e = observe_even(capped, n);
  ASSERT_TRUE(e.resplit);
  EXPECT_EQ(e.counts, (std::vector<PetscInt>{4737, 2369, 947, 947}));
  expect_proportional(e.counts, capped, n, 1.0);
}

TEST(exec_gpu_split, ProcessGridFollowsRowAndColumnSpeeds) {
  // 8 ranks as a 4 x 2 process grid (rank = i + 4 j); the device ranks are the first row
  // (j = 0), so the row heights follow the row totals and the columns stay even.
  const fe::Hardware hw = node_with({108, 108, 108, 108});
  const std::vector<double> speeds = speeds_of(hw, 8, 1);
  const PetscInt nx = 64, ny = 96;
  const fe::RebalanceLayout layout = fe::RebalanceLayout::grid_2d(4, 2, nx, ny);
  std::vector<PetscInt> counts(8, (nx / 4) * (ny / 2));
  const fe::RebalanceDecision d = observe_even(speeds, nx * ny, layout, counts);
  ASSERT_TRUE(d.resplit);
  EXPECT_EQ(d.lx, (std::vector<PetscInt>{16, 16, 16, 16}));
  EXPECT_EQ(d.ly, (std::vector<PetscInt>{80, 16}));  // 96 x 20 / 24 and 96 x 4 / 24
  expect_proportional(d.counts, speeds, nx * ny, 0.0);
}
