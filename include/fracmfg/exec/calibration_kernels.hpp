#pragma once
// The calibration registry: every kernel the solvers dispatch through a Selector, under the
// exact Workload name they use (kernel_names.hpp), plus the generic kernels. For each, a
// function building inputs of about n work units and the host and cuda calls on them,
// described by the same Workload (elements, bytes, transfers) as the solvers' calls, so the
// performance model's size variable means the same in `fracmfg calibrate`
// (exec/calibrate.hpp), in the solvers and in the kernel benchmark of scripts/gpu-check.
//
// Needs no MPI and no Selector (the kernel-only build compiles it); the host calls need
// Kokkos initialised.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fracmfg/exec/workload.hpp"
#include "fracmfg/kernels/cuda_resources.hpp"

namespace fracmfg::exec {

/// Inputs of one size and the calls on them. The functions own (capture) the inputs.
struct CalibrationCase {
  /// How the call describes itself (kernel is set by calibrate()); units() is the size
  /// recorded with each sample.
  Workload workload;
  std::function<void()> host;
  /// The cuda call on `device` with the rank's plan cache; empty: no cuda path. Must
  /// synchronise before returning (like a Selector cuda_fn); failure is an exception.
  std::function<void(int device, kernels::CudaResources* resources)> cuda;
};

/// One entry of the registry.
struct CalibratedKernel {
  std::string name;     ///< the Workload name (kernel_names.hpp)
  std::string summary;  ///< what one case computes, one line
  /// Bytes of host memory the inputs of n units take (the memory check).
  double host_bytes_per_unit = 0.0;
  /// Builds the inputs for about n >= 1 units.
  std::function<CalibrationCase(std::int64_t n)> make_case;
};

/// The registry: tridiag_batched, kde_binned_1d, kde_binned_2d, history_fft,
/// mfg_particle_kde, mfg_particle_step, mfg_hjb_rows, mfg_fp_rows, mfg_nonlocal_coupling,
/// fpde_soe_history, fpde_l1_history,
/// fpde_riesz_product, fpde_circulant_pc, fpde_circulant_2d (in this order).
/// Builds a new list per call.
std::vector<CalibratedKernel> calibration_kernels();

/// The registry's names, in order.
std::vector<std::string> calibration_kernel_names();

/// The entries of `all` named in `names` (in `all`'s order); an unknown name is a
/// UsageError listing the valid ones with the closest match. Empty names: all of them.
std::vector<CalibratedKernel> select_kernels(std::vector<CalibratedKernel> all,
                                             const std::vector<std::string>& names);

}  // namespace fracmfg::exec
