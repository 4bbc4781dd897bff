#pragma once
// GPU placement: which visible device each rank of a node uses.
//
// Rule (deterministic, a pure function of the devices, the node size and the limit):
//  - at most max_ranks_per_gpu ranks per device (<= 0: no limit); ranks beyond the devices'
//    total capacity use cpu;
//  - with no more ranks than devices, each rank gets a device of its own: the most capable
//    ones (device_score, ties to the lower device id);
//  - otherwise every device gets at least one rank and the ranks are shared out in
//    proportion to device_score, capped at the limit (apportion() in partition.hpp:
//    largest remainders, ties to the lower device index), so equal devices share evenly
//    (8 ranks on 4 devices: 2 each; on 3 devices: 3/3/2);
//  - node-local ranks are given out in contiguous blocks in device order (ranks 0..k-1 on
//    the first device, ...), which keeps ranks bound to one socket on that socket's
//    devices under the usual block rank mapping; the highest node ranks use cpu.

#include <string>
#include <vector>

#include "fracmfg/exec/hardware.hpp"

namespace fracmfg::exec {

/// The device of one rank.
struct DeviceSlot {
  /// CUDA runtime device id (as in Hardware::gpus[i].id), or -1 for none (the cpu backend).
  int device = -1;
  /// Index into Hardware::gpus, or -1 for none.
  int gpu_index = -1;
  /// How many node-local ranks share this device (this one included); 0 without a device.
  int sharing = 0;

  bool on_cpu() const { return device < 0; }
};

/// "cpu" (no device) or "cuda:<device id>".
std::string to_string(const DeviceSlot& slot);

/// How many ranks each of hw.gpus receives (same order) when node_size ranks share the
/// node. Throws Error for node_size < 1.
std::vector<int> ranks_per_gpu(const Hardware& hw, int node_size, int max_ranks_per_gpu);

/// The slot of every node-local rank 0..node_size-1.
std::vector<DeviceSlot> place_node(const Hardware& hw, int node_size, int max_ranks_per_gpu);

/// The slot of node-local rank node_rank (0 <= node_rank < node_size, else Error).
DeviceSlot place_rank(const Hardware& hw, int node_rank, int node_size, int max_ranks_per_gpu);

/// The slot of the rank hw describes (hw.node_rank of hw.node_size).
DeviceSlot place_rank(const Hardware& hw, int max_ranks_per_gpu);

/// Makes slot's device current for the calling host thread (cudaSetDevice). A cpu slot is
/// a no-op. Throws NotCompiled in a build without CUDA and Error when the runtime refuses.
void activate_device(const DeviceSlot& slot);

}  // namespace fracmfg::exec
