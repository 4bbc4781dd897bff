#pragma once
// Host-callable entry points of the CUDA translation units (compiled by nvcc). This header
// is plain C++ so that g++-compiled dispatch code can include it.
#include "fracmfg/exec/cuda_devices.hpp"

namespace fracmfg::kernels::cuda {
exec::CudaStatus probe();
/// Returns an empty string on success, else the CUDA error text.
std::string axpy(int device, double a, const double* x, double* y, std::size_t n);
}  // namespace fracmfg::kernels::cuda
