#pragma once
// `fracmfg calibrate`: micro-benchmarks of every registered kernel on every backend each
// rank has, recorded into the performance model the solvers consult (exec/calibrate.hpp).
#include <string>
#include <vector>

#include "fracmfg/core/environment.hpp"

namespace fracmfg::driver {

struct CalibrateArgs {
  std::string sizes = "1e2:1e7";     ///< "min:max" work units (or one size)
  int per_decade = 2;                ///< sizes per decade
  int repeats = 3;                   ///< timed calls per size
  std::vector<std::string> kernels;  ///< registry names; empty: all
  std::string backend = "all";       ///< cpu | cuda | all
  std::string output;                ///< performance directory; empty: the default
  double max_seconds = 4.0;          ///< time cap per kernel and backend, per rank
};

/// Collective: every rank calibrates its own backends and merges its samples into its
/// node's performance file; rank 0 prints the table of every distinct (host, device) file
/// and the notes. Bad arguments are UsageErrors (reported once); asking for cuda in a build
/// without it is NotCompiled. Returns the exit code.
int run_calibrate(core::Environment& env, const CalibrateArgs& args);

}  // namespace fracmfg::driver
