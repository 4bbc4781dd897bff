#pragma once
// Host-callable CUDA implementation of kernels::tridiag_batched (defined in
// tridiag_batched.cu). Plain C++: the g++-compiled dispatch includes it.

#include "fracmfg/kernels/tridiag_batched.hpp"

namespace fracmfg::kernels::cuda {

/// Solves a checked, non-empty batch on options.cuda_device (host memory in and out).
/// Throws fracmfg::Error ("CUDA ...") on a CUDA or cuSPARSE failure and NumericalError on a
/// zero pivot (thomas) or a non-finite solution (cusparse).
void tridiag_batched(const TridiagBatch& batch, const TridiagOptions& options);

}  // namespace fracmfg::kernels::cuda
