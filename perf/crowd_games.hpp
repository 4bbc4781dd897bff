#pragma once
// The crowd games of the mean field game benchmarks (bench_mfg, bench_mfg_spectrum), as the
// `mfg` section of a deck without its `iteration` entry: the games of inputs/crowd_1d.yaml
// and inputs/crowd_2d.yaml on other grids, and their 3D counterpart (a corridor with a bump
// of high cost in the middle, the crowd starting on one side and paid to reach the other).
//
//   const std::string deck = "problem: mfg\nmfg:\n" + crowd_game("crowd2d", 128, 50) +
//                            "  iteration: {damping: 0.3}\n";

#include <string>

#include "fracmfg/core/error.hpp"

namespace fracmfg::perf {

/// problem crowd1d | crowd2d | crowd3d, `points` per axis, `steps` time steps on [0, 1];
/// `coupling` log | power | nonlocal (crowd1d; the 2D and 3D games are log). Throws
/// fracmfg::Error for another problem name.
inline std::string crowd_game(const std::string& problem, long points, long steps,
                              const std::string& coupling = "log") {
  const std::string n = std::to_string(points);
  const std::string time = "  time: {horizon: 1.0, steps: " + std::to_string(steps) + "}\n";
  if (problem == "crowd3d") {
    return "  domain: {length: [1.0, 1.0, 1.0], boundary: reflecting}\n"
           "  grid: {points: [" +
           n + ", " + n + ", " + n + "]}\n" + time +
           "  diffusion: 0.01\n"
           "  coupling: {type: log, potential: "
           "\"50*exp(-((x-0.5)^2/0.002 + ((y-0.5)^2 + (z-0.5)^2)/0.03))\"}\n"
           "  initial_density: \"exp(-((x-0.15)^2 + (y-0.5)^2 + (z-0.5)^2)/0.01)\"\n"
           "  terminal_cost: \"5*(x-0.9)^2\"\n";
  }
  if (problem == "crowd2d") {
    return "  domain: {length: [1.0, 1.0], boundary: reflecting}\n"
           "  grid: {points: [" +
           n + ", " + n + "]}\n" + time +
           "  diffusion: 0.01\n"
           "  coupling: {type: log, potential: "
           "\"50*exp(-((x-0.5)^2/0.002 + (y-0.5)^2/0.03))\"}\n"
           "  initial_density: \"exp(-((x-0.15)^2 + (y-0.5)^2)/0.01)\"\n"
           "  terminal_cost: \"5*(x-0.9)^2\"\n";
  }
  if (problem == "crowd1d") {
    return "  domain: {length: [1.0], boundary: periodic}\n"
           "  grid: {points: [" +
           n + "]}\n" + time +
           "  diffusion: 0.05\n"
           "  coupling: {type: " +
           coupling +
           ", potential: \"0.5*cos(2*pi*x)\"}\n"
           "  initial_density: \"exp(-(x-0.3)^2/0.005)\"\n";
  }
  throw Error("-problem " + problem + ": expected crowd1d, crowd2d or crowd3d");
}

}  // namespace fracmfg::perf
