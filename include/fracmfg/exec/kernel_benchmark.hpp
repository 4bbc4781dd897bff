#pragma once
// exec kernel benchmark: CPU-vs-GPU timings of the calibration kernels
// (calibration_kernels.hpp), the performance model they give and the Markdown report of
// `scripts/gpu-check` (perf/bench_kernels_gpu.cpp measures, these functions interpret).
//
//   std::vector<exec::KernelTiming> t = ...;             // measured, or synthetic in tests
//   exec::PerfModel model(host_name, device_name);        // the names the Selector uses
//   exec::record_timings(model, t);                       // every timed call is a sample
//   model.save(dir);                                      // "<host>__<device>.perf"
//   std::string md = exec::format_benchmark_report(model, t, context);
//
// record_timings adds the samples exactly as `fracmfg calibrate` does (one per timed call,
// size Workload::units()), so a Selector on the same host and device loads the file and
// decides with it. The decision shown for a size is the Selector's rule 4 (the model) for
// backend auto once both backends are fitted: cuda when its predicted time is strictly
// smaller (Selector::decide); the memory rule and explicit choices are not part of it.
//
// Needs no MPI (the kernel-only build compiles it). Not thread-safe (like PerfModel).

#include <cstdint>
#include <string>
#include <vector>

#include "fracmfg/exec/perf_model.hpp"
#include "fracmfg/exec/workload.hpp"

namespace fracmfg::exec {

/// The timed calls of one kernel at one size on one backend.
struct KernelTiming {
  std::string kernel;  ///< calibration name (kernel_names.hpp)
  Backend backend = Backend::cpu;
  double units = 0.0;           ///< Workload::units() of the call
  std::vector<double> seconds;  ///< one entry per timed call (warm-up excluded)
  std::string failure;          ///< non-empty: the call failed (e.g. the cuda path threw)
};

/// Median of t.seconds; NaN without timed calls or after a failure.
double median_seconds(const KernelTiming& t);

/// Adds every timed call of `timings` (failures skipped) to `model` as a sample, learning
/// switched on for the duration.
void record_timings(PerfModel& model, const std::vector<KernelTiming>& timings);

/// The backend the Selector's model rule picks for size n: cuda when both backends are
/// fitted and cuda's prediction is strictly smaller, else cpu.
Backend model_choice(const PerfModel& model, KernelId kernel, double n);

/// Where the report comes from (its first lines).
struct BenchmarkContext {
  std::string host_name;
  std::string device_name;         ///< "cpu" without a device
  std::string cuda_status;         ///< exec::probe_cuda().status, or a note
  std::string model_file;          ///< where the performance model was written ("" if not)
  std::vector<std::string> notes;  ///< anything else worth saying (fallbacks, skips)
};

/// The Markdown report: context, then per kernel a table of sizes with the median cpu and
/// cuda times, the speed-up (cpu / cuda), the measured faster backend and the model's
/// decision; then a summary table with each kernel's fitted lines, crossover n* and the
/// largest speed-up; failures and notes last.
std::string format_benchmark_report(const PerfModel& model,
                                    const std::vector<KernelTiming>& timings,
                                    const BenchmarkContext& context);

}  // namespace fracmfg::exec
