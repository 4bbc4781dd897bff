#include "fracmfg/exec/placement.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/partition.hpp"

#if FRACMFG_HAVE_CUDA
#include "exec/cuda/device_select.hpp"
#endif

namespace fracmfg::exec {

std::string to_string(const DeviceSlot& slot) {
  return slot.on_cpu() ? std::string("cpu") : "cuda:" + std::to_string(slot.device);
}

std::vector<int> ranks_per_gpu(const Hardware& hw, int node_size, int max_ranks_per_gpu) {
  if (node_size < 1) throw Error("GPU placement: node size must be at least 1");
  const auto gpus = static_cast<int>(hw.gpus.size());
  std::vector<int> count(hw.gpus.size(), 0);
  if (gpus == 0) return count;
  const bool limited = max_ranks_per_gpu > 0;
  const long capacity = limited ? static_cast<long>(gpus) * max_ranks_per_gpu : node_size;
  const int on_gpus = static_cast<int>(std::min<long>(node_size, capacity));

  std::vector<double> score(hw.gpus.size());
  for (std::size_t g = 0; g < hw.gpus.size(); ++g) score[g] = device_score(hw.gpus[g]);

  if (on_gpus <= gpus) {
    // A device each, the most capable first (ties to the lower index).
    std::vector<std::size_t> order(hw.gpus.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return score[a] > score[b]; });
    for (int r = 0; r < on_gpus; ++r) count[order[static_cast<std::size_t>(r)]] = 1;
    return count;
  }
  const std::vector<std::int64_t> shares =
      apportion(score, on_gpus, 1, limited ? max_ranks_per_gpu : -1);
  for (std::size_t g = 0; g < shares.size(); ++g) count[g] = static_cast<int>(shares[g]);
  return count;
}

std::vector<DeviceSlot> place_node(const Hardware& hw, int node_size, int max_ranks_per_gpu) {
  const std::vector<int> count = ranks_per_gpu(hw, node_size, max_ranks_per_gpu);
  std::vector<DeviceSlot> slots(static_cast<std::size_t>(node_size));
  std::size_t r = 0;
  for (std::size_t g = 0; g < count.size(); ++g) {
    for (int k = 0; k < count[g]; ++k, ++r) {
      slots[r].device = hw.gpus[g].id;
      slots[r].gpu_index = static_cast<int>(g);
      slots[r].sharing = count[g];
    }
  }
  return slots;  // the rest keep the host slot
}

DeviceSlot place_rank(const Hardware& hw, int node_rank, int node_size, int max_ranks_per_gpu) {
  if (node_rank < 0 || node_rank >= node_size) {
    throw Error("GPU placement: node rank " + std::to_string(node_rank) + " outside 0.." +
                std::to_string(node_size - 1));
  }
  return place_node(hw, node_size, max_ranks_per_gpu)[static_cast<std::size_t>(node_rank)];
}

DeviceSlot place_rank(const Hardware& hw, int max_ranks_per_gpu) {
  return place_rank(hw, hw.node_rank, hw.node_size, max_ranks_per_gpu);
}

void activate_device(const DeviceSlot& slot) {
  if (slot.on_cpu()) return;
#if FRACMFG_HAVE_CUDA
  const std::string err = cuda::select_device(slot.device);
  if (!err.empty()) {
    throw Error("cannot make CUDA device " + std::to_string(slot.device) + " current: " + err);
  }
#else
  throw NotCompiled("the cuda backend", {"cpu"});
#endif
}

}  // namespace fracmfg::exec
