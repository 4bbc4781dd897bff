#pragma once
// Host-callable CUDA implementations of kernels::circulant_batched_cuda and
// kernels::circulant_2d_cuda (defined in circulant.cu). Plain C++: the g++-compiled entry
// point includes it.

#include "fracmfg/kernels/circulant.hpp"
#include "fracmfg/kernels/cuda_resources.hpp"

namespace fracmfg::kernels::cuda {

/// A checked, non-empty batch on `device`: x, y and the eigenvalues over, cuFFT D2Z/Z2D
/// batched plans from `cache`, the pad/multiply/extract items of kernels/circulant_item.hpp,
/// y back. Throws fracmfg::Error ("CUDA ...") on failure with y untouched.
void circulant_batched(const CirculantBatch& batch, int device, ResourceCache* cache);

/// A checked, non-empty 2D product on `device`: x, y and the eigenvalues over, cuFFT
/// D2Z/Z2D 2D plans from `cache`, the same items over the flattened grid, y back. Throws
/// fracmfg::Error ("CUDA ...") on failure with y untouched.
void circulant_2d(const Circulant2d& product, int device, ResourceCache* cache);

}  // namespace fracmfg::kernels::cuda
