#pragma once
// Host-callable CUDA implementation of kernels::kde (defined in kde.cu). Plain C++: the
// g++-compiled dispatch includes it.

#include "fracmfg/kernels/cuda_resources.hpp"
#include "fracmfg/kernels/kde.hpp"
#include "kernels/host/kde_plan.hpp"

namespace fracmfg::kernels::cuda {

/// Binned estimate of a checked call with its plan (spectra included) on `device`: binning
/// with atomicAdd (the samples copied and binned in `sample_chunks` >= 1 pieces), cuFFT
/// D2Z/Z2D convolution. Throws fracmfg::Error ("CUDA ...") on failure. cuFFT plans come
/// from `cache`, or are created per call when it is null.
void kde_binned(const detail::KdePlan& plan, const KdeSamples& samples, double* density,
                int sample_chunks, int device, ResourceCache* cache);

/// Exact sum of a checked call with its plan on `device`, one thread per grid point.
void kde_exact(const detail::KdePlan& plan, const KdeSamples& samples, double* density, int device);

}  // namespace fracmfg::kernels::cuda
