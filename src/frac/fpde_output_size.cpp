// frac::fpde_output_bytes (declared in fracmfg/frac/fpde_run.hpp).
#include <algorithm>
#include <cstdint>

#include "fracmfg/frac/fpde_run.hpp"
#include "fracmfg/frac/fpde_time_mesh.hpp"
#include "fracmfg/frac/soe.hpp"

namespace fracmfg::frac {

io::OutputBytes fpde_output_bytes(const io::FpdeConfig& config, const io::OutputConfig& output,
                                  std::int64_t stop_at) {
  std::uint64_t points = 1;
  for (int n : config.grid.points) points *= static_cast<std::uint64_t>(std::max(n, 1));
  const auto steps = static_cast<std::uint64_t>(std::max(config.time.steps, 1));
  const auto every = static_cast<std::uint64_t>(std::max(output.every, 1));
  const std::uint64_t written = steps / every + 1 + (steps % every != 0 ? 1 : 0);
  const std::uint64_t level = points * sizeof(double);

  io::OutputBytes out;
  // The series of u and the step index (/time, /step).
  out.results = io::series_bytes(written, points) + written * 2 * sizeof(double) +
                2 * io::kH5DatasetOverhead + io::kH5FileOverhead;
  if (output.checkpoint_every > 0 || stop_at >= 0) {
    std::uint64_t vectors = 1;  // u
    if (config.type == io::FpdeConfig::Type::time_fractional) {
      if (config.history.method == io::FpdeConfig::History::Method::direct) {
        vectors += 1 + steps;
      } else {
        const FpdeTimeMesh mesh(config.time.horizon, config.time.steps, config.time.grading);
        const SoeApproximation soe = soe_approximation(config.order, mesh.min_history_lag(),
                                                       mesh.horizon(), config.history.tolerance);
        vectors += 1 + static_cast<std::uint64_t>(soe.size());
      }
    }
    out.checkpoints = 2 * (vectors * level + 4 * io::kH5DatasetOverhead + io::kH5FileOverhead);
  }
  return out;
}

}  // namespace fracmfg::frac
