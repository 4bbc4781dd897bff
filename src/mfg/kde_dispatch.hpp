#pragma once
// The binned KDE of the mfg solvers (particle densities, the nonlocal coupling's
// convolution) through the rank's selector: one workload model, the host kernel, and the
// CUDA kernel on the rank's device with the selector's cuFFT plan cache.
#include <cstdint>

#include "fracmfg/exec/selector.hpp"
#include "fracmfg/kernels/kde.hpp"

namespace fracmfg::mfg::detail {

/// density (the grid's points) <- KDE of the samples; on the host when selector is null.
/// Not collective.
void kde_on_rank(exec::Selector* selector, exec::KernelId kernel, const kernels::KdeGrid& grid,
                 const kernels::KdeSamples& samples, double* density);

}  // namespace fracmfg::mfg::detail
