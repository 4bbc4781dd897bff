#pragma once
// exec::calibrate: micro-benchmarks that fill the performance model (`fracmfg calibrate`).
//
//   exec::Selector sel(exec::Hardware::probe(comm), config, log);
//   exec::CalibrationOptions o;  o.min_size = 1e2;  o.max_size = 1e5;
//   const exec::CalibrationReport r = exec::calibrate(sel, exec::calibration_kernels(), o);
//   sel.model().save(dir);                   // merged with the node's other ranks
//   std::printf("%s", exec::format_calibration(sel.model(), r).c_str());
//
// The registry, calibration_kernels(), is exec/calibration_kernels.hpp: every kernel the
// solvers dispatch through a Selector, with inputs of about n work units described by the
// same Workload as the solvers' calls.
//
// calibrate() times each kernel on each backend this rank can use (cpu always; cuda when
// the selector has a device and options.cuda is set) at sizes log-spaced from min_size to
// max_size (per_decade per decade, both ends included): per size one untimed warm-up call
// (plans, caches, first-touch), then `repeats` timed calls, each recorded as a sample in
// selector.model() (PerfModel::add_sample with Workload::units()). Sizes are skipped, with
// a note, when the inputs would not fit in half the available host memory, the working set
// not in the device budget (cuda only), or when the time spent on a (kernel, backend)
// would exceed max_seconds_per_kernel (predicted from the previous size, linearly); the
// smallest size always runs, and repeats are cut so that one size takes at most about
// max_seconds_per_size. Timing uses selector.now() (Selector::set_clock injects timings).
//
// Not collective: each rank calibrates its own backends. Needs Kokkos (core::Environment).

#include <cstdint>
#include <string>
#include <vector>

#include "fracmfg/exec/calibration_kernels.hpp"
#include "fracmfg/exec/perf_model.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/exec/workload.hpp"
#include "fracmfg/kernels/cuda_resources.hpp"

namespace fracmfg::exec {

struct CalibrationOptions {
  double min_size = 1e2;                ///< work units, >= 1
  double max_size = 1e7;                ///< >= min_size
  int per_decade = 2;                   ///< sizes per decade (log-spaced), >= 1
  int repeats = 3;                      ///< timed calls per size, >= 1
  bool cpu = true;                      ///< calibrate the cpu backend
  bool cuda = true;                     ///< calibrate cuda where the rank has a device
  double max_seconds_per_kernel = 4.0;  ///< time cap per (kernel, backend), > 0
  double max_seconds_per_size = 1.0;    ///< repeats are cut beyond this, > 0
  /// Host memory the inputs may take, bytes; 0: half of the available memory (probed).
  double host_memory_limit = 0.0;
};

/// The sizes calibrate() visits: round(min * 10^(k / per_decade)), k = 0, 1, ... up to
/// max (max itself included), duplicates removed. Error for invalid options.
std::vector<std::int64_t> calibration_sizes(const CalibrationOptions& options);

/// What calibrate() did for one (kernel, backend).
struct CalibrationEntry {
  std::string kernel;
  Backend backend = Backend::cpu;
  int sizes = 0;              ///< sizes measured
  std::uint64_t samples = 0;  ///< samples recorded by this calibration
  double min_units = 0.0;     ///< smallest and largest size measured (units)
  double max_units = 0.0;
  double seconds = 0.0;            ///< time spent, inputs included
  std::vector<std::string> notes;  ///< skipped sizes and why, failures
};

struct CalibrationReport {
  std::vector<CalibrationEntry> entries;
  /// Rank-level notes (e.g. "cuda: no device on this rank").
  std::vector<std::string> notes;
};

/// Runs the calibration (see the header comment) and records the samples in
/// selector.model() (learning is switched on for the duration). A cuda failure ends that
/// kernel's cuda calibration with a note. Not collective.
CalibrationReport calibrate(Selector& selector, const std::vector<CalibratedKernel>& kernels,
                            const CalibrationOptions& options);

/// The table: kernel, backend, samples, fitted latency [us], throughput [units/s] (1 /
/// seconds per unit) and the predicted crossover n* where cuda becomes faster ("none" when
/// one backend wins at every size, "cpu only" without fitted cuda samples), for every
/// kernel of `kernels` that has samples in `model`.
std::string format_calibration(const PerfModel& model, const std::vector<std::string>& kernels);

}  // namespace fracmfg::exec
