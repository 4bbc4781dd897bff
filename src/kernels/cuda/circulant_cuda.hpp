#pragma once
// Host-callable CUDA implementation of kernels::circulant_batched_cuda (defined in
// circulant.cu). Plain C++: the g++-compiled entry point includes it.

#include "fracmfg/kernels/circulant.hpp"
#include "fracmfg/kernels/cuda_resources.hpp"

namespace fracmfg::kernels::cuda {

/// A checked, non-empty batch on `device`: x, y and the eigenvalues over, cuFFT D2Z/Z2D
/// batched plans from `cache`, the pad/multiply/extract items of kernels/circulant_item.hpp,
/// y back. Throws fracmfg::Error ("CUDA ...") on failure with y untouched.
void circulant_batched(const CirculantBatch& batch, int device, ResourceCache* cache);

}  // namespace fracmfg::kernels::cuda
