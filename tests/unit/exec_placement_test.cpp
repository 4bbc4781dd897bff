// GPU placement: ranks of a node spread over its devices, weighted, capped, deterministic.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/placement.hpp"

namespace fe = fracmfg::exec;

namespace {

// A node with `count` devices of the given multiprocessor counts (cc 8.0).
fe::Hardware node_with(const std::vector<int>& multiprocessors) {
  std::string yaml = "host_name: n\ncuda_compiled: true\ngpus:\n";
  if (multiprocessors.empty()) yaml = "host_name: n\ncuda_compiled: true\n";
  for (int mp : multiprocessors) {
    yaml +=
        "  - {name: g, cc: \"8.0\", multiprocessors: " + std::to_string(mp) + ", memory_gb: 16}\n";
  }
  return fe::Hardware::from_yaml(yaml, "node.yaml");
}

std::vector<int> devices_of(const std::vector<fe::DeviceSlot>& slots) {
  std::vector<int> d;
  for (const auto& s : slots) d.push_back(s.device);
  return d;
}

}  // namespace

TEST(exec_placement, NoGpuPutsEveryRankOnCpu) {
  const fe::Hardware hw = node_with({});
  EXPECT_TRUE(fe::ranks_per_gpu(hw, 4, 0).empty());
  const auto slots = fe::place_node(hw, 4, 0);
  ASSERT_EQ(slots.size(), 4u);
  for (const auto& s : slots) {
    EXPECT_TRUE(s.on_cpu());
    EXPECT_EQ(s.gpu_index, -1);
    EXPECT_EQ(s.sharing, 0);
    EXPECT_EQ(fe::to_string(s), "cpu");
  }
}

TEST(exec_placement, OneGpuIsSharedByEveryRank) {
  const fe::Hardware hw = node_with({108});
  EXPECT_EQ(fe::ranks_per_gpu(hw, 1, 0), std::vector<int>{1});
  const auto slots = fe::place_node(hw, 4, 0);
  EXPECT_EQ(devices_of(slots), (std::vector<int>{0, 0, 0, 0}));
  for (const auto& s : slots) EXPECT_EQ(s.sharing, 4);
  EXPECT_EQ(fe::to_string(slots[2]), "cuda:0");
}

TEST(exec_placement, EightRanksOnFourGpusGetTwoEach) {
  const fe::Hardware hw = node_with({108, 108, 108, 108});
  EXPECT_EQ(fe::ranks_per_gpu(hw, 8, 0), (std::vector<int>{2, 2, 2, 2}));
  EXPECT_EQ(devices_of(fe::place_node(hw, 8, 0)), (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
}

TEST(exec_placement, EightRanksOnThreeGpusSplitThreeThreeTwo) {
  const fe::Hardware hw = node_with({108, 108, 108});
  EXPECT_EQ(fe::ranks_per_gpu(hw, 8, 0), (std::vector<int>{3, 3, 2}));
  const auto slots = fe::place_node(hw, 8, 0);
  EXPECT_EQ(devices_of(slots), (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2}));
  EXPECT_EQ(slots[0].sharing, 3);
  EXPECT_EQ(slots[7].sharing, 2);
  // place_rank agrees with place_node for every rank.
  for (int r = 0; r < 8; ++r) {
    const auto s = fe::place_rank(hw, r, 8, 0);
    EXPECT_EQ(s.device, slots[static_cast<std::size_t>(r)].device) << r;
    EXPECT_EQ(s.gpu_index, slots[static_cast<std::size_t>(r)].gpu_index) << r;
  }
}

TEST(exec_placement, RanksBeyondTheLimitRunOnCpu) {
  const fe::Hardware hw = node_with({108, 108});
  EXPECT_EQ(fe::ranks_per_gpu(hw, 8, 3), (std::vector<int>{3, 3}));
  EXPECT_EQ(devices_of(fe::place_node(hw, 8, 3)), (std::vector<int>{0, 0, 0, 1, 1, 1, -1, -1}));
  // Below the limit nothing changes.
  EXPECT_EQ(fe::ranks_per_gpu(hw, 4, 3), (std::vector<int>{2, 2}));
  // Limit 1: one rank per device.
  EXPECT_EQ(devices_of(fe::place_node(hw, 3, 1)), (std::vector<int>{0, 1, -1}));
}

TEST(exec_placement, UnequalGpusAreWeightedByCapability) {
  const fe::Hardware hw = node_with({100, 50});  // scores 6400 : 3200
  EXPECT_EQ(fe::ranks_per_gpu(hw, 6, 0), (std::vector<int>{4, 2}));
  EXPECT_EQ(fe::ranks_per_gpu(hw, 9, 0), (std::vector<int>{6, 3}));
  EXPECT_EQ(devices_of(fe::place_node(hw, 6, 0)), (std::vector<int>{0, 0, 0, 0, 1, 1}));
  // The cap moves the surplus of the big device to the host, not to the small one beyond
  // its own cap.
  EXPECT_EQ(fe::ranks_per_gpu(hw, 9, 4), (std::vector<int>{4, 4}));
  // Every device gets a rank before any doubles up, however weak.
  const fe::Hardware lopsided = node_with({100, 1});
  EXPECT_EQ(fe::ranks_per_gpu(lopsided, 3, 0), (std::vector<int>{2, 1}));
  // The weighting uses the architecture too: 40 SMs at cc 8.6 (128 lanes) beat 60 at 8.0.
  const fe::Hardware arch = fe::Hardware::from_yaml(
      "cuda_compiled: true\ngpus:\n"
      "  - {name: a, cc: \"8.0\", multiprocessors: 60, memory_gb: 8}\n"
      "  - {name: b, cc: \"8.6\", multiprocessors: 40, memory_gb: 8}\n",
      "arch.yaml");
  EXPECT_EQ(fe::ranks_per_gpu(arch, 5, 0), (std::vector<int>{2, 3}));
}

TEST(exec_placement, FewerRanksThanGpusTakeTheMostCapable) {
  const fe::Hardware hw = node_with({50, 100, 80});
  EXPECT_EQ(fe::ranks_per_gpu(hw, 2, 0), (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(devices_of(fe::place_node(hw, 2, 0)), (std::vector<int>{1, 2}));
  EXPECT_EQ(devices_of(fe::place_node(hw, 1, 0)), (std::vector<int>{1}));
}

TEST(exec_placement, SlotsCarryRuntimeDeviceIds) {
  const fe::Hardware hw = fe::Hardware::from_yaml(
      "cuda_compiled: true\nnode_rank: 1\nnode_size: 2\ngpus:\n"
      "  - {id: 2, name: a, cc: \"8.0\", multiprocessors: 10, memory_gb: 8}\n"
      "  - {id: 5, name: b, cc: \"8.0\", multiprocessors: 10, memory_gb: 8}\n",
      "ids.yaml");
  const fe::DeviceSlot s = fe::place_rank(hw, 0);  // node rank 1 of 2 from the description
  EXPECT_EQ(s.device, 5);
  EXPECT_EQ(s.gpu_index, 1);
  EXPECT_EQ(s.sharing, 1);
}

TEST(exec_placement, PlacementIsDeterministic) {
  const fe::Hardware hw = node_with({108, 80, 108, 46, 132});
  for (int n = 1; n <= 24; ++n) {
    for (int cap : {0, 1, 2, 5}) {
      const auto a = fe::place_node(hw, n, cap);
      const auto b = fe::place_node(hw, n, cap);
      ASSERT_EQ(devices_of(a), devices_of(b));
      // Every rank counted, every device used when there are enough ranks, caps held.
      const auto per = fe::ranks_per_gpu(hw, n, cap);
      int on_gpu = 0;
      for (int c : per) {
        on_gpu += c;
        if (cap > 0) {
          EXPECT_LE(c, cap);
        }
        if (n >= 5) {
          EXPECT_GE(c, 1);
        }
      }
      const int capacity = cap > 0 ? 5 * cap : n;
      EXPECT_EQ(on_gpu, std::min(n, capacity)) << n << " " << cap;
    }
  }
}

TEST(exec_placement, BadRankOrSizeIsAnError) {
  const fe::Hardware hw = node_with({108});
  EXPECT_THROW(fe::place_rank(hw, 4, 4, 0), fracmfg::Error);
  EXPECT_THROW(fe::place_rank(hw, -1, 4, 0), fracmfg::Error);
  EXPECT_THROW(fe::ranks_per_gpu(hw, 0, 0), fracmfg::Error);
}

TEST(exec_placement, ActivatingACpuSlotIsANoOpAndAMissingDeviceIsAnError) {
  EXPECT_NO_THROW(fe::activate_device(fe::DeviceSlot{}));
  if (!fe::probe_cuda().devices.empty()) GTEST_SKIP() << "a CUDA device is present";
  fe::DeviceSlot slot;
  slot.device = 0;
  slot.gpu_index = 0;
  slot.sharing = 1;
#if FRACMFG_HAVE_CUDA
  EXPECT_THROW(fe::activate_device(slot), fracmfg::Error);
#else
  EXPECT_THROW(fe::activate_device(slot), fracmfg::NotCompiled);
#endif
}
