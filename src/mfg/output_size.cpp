#include "fracmfg/mfg/output_size.hpp"

#include <algorithm>
#include <cstdint>

namespace fracmfg::mfg {

io::OutputBytes mfg_output_bytes(const io::MfgConfig& config, const io::OutputConfig& output) {
  std::uint64_t points = 1;
  for (int n : config.grid.points) points *= static_cast<std::uint64_t>(std::max(n, 1));
  const auto steps = static_cast<std::uint64_t>(std::max(config.time.steps, 1));
  const auto every = static_cast<std::uint64_t>(std::max(output.every, 1));
  const std::uint64_t written = steps / every + 1 + (steps % every != 0 ? 1 : 0);
  const std::uint64_t level = points * sizeof(double);  // one field at one time level
  const auto iterations = static_cast<std::uint64_t>(std::max(config.iteration.max_iterations, 1));

  io::OutputBytes out;
  // Solver::write: the series of u and m, the step index (/time, /step), /mfg/mass,
  // /mfg/outflow, /convergence/{u,m,damping}, /mfg/seconds (and an obstacle's mask, one
  // level).
  out.results = 2 * io::series_bytes(written, points) + written * 2 * sizeof(double) +
                2 * (steps + 1) * sizeof(double) + 4 * iterations * sizeof(double) + level +
                9 * io::kH5DatasetOverhead + io::kH5FileOverhead;
  if (output.checkpoint_every > 0) {
    // Solver::write_checkpoint: one state = u and m at every level; Anderson keeps
    // f, g and depth pairs of differences of states.
    const auto depth = static_cast<std::uint64_t>(std::max(config.iteration.anderson, 0));
    const std::uint64_t states = 1 + (depth > 0 ? 2 + 2 * depth : 0);
    const std::uint64_t one = states * 2 * (steps + 1) * (level + io::kH5DatasetOverhead) +
                              7 * iterations * sizeof(double) + 8 * io::kH5DatasetOverhead +
                              io::kH5FileOverhead;
    out.checkpoints = 2 * one;
  }
  return out;
}

}  // namespace fracmfg::mfg
