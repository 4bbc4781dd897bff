#pragma once
// Host-callable entry points of the CUDA translation units (compiled by nvcc). This header
// is plain C++ so that g++-compiled dispatch code can include it.
#include "fracmfg/exec/cuda_devices.hpp"

namespace fracmfg::kernels::cuda {
/// Every visible device's static properties; creates no context (free memory not read).
exec::CudaStatus probe();
/// Free and total memory of `device`, made current (this creates its context if it has
/// none). Returns an empty string on success, else the CUDA error text.
std::string free_memory(int device, std::size_t& free_bytes, std::size_t& total_bytes);
/// Returns an empty string on success, else the CUDA error text.
std::string axpy(int device, double a, const double* x, double* y, std::size_t n);
}  // namespace fracmfg::kernels::cuda
