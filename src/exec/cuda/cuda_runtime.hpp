#pragma once
// Host-callable entry points of the CUDA runtime probe (device_query.cu, compiled by nvcc),
// used by exec/cuda_devices.cpp. Plain C++ so that g++-compiled code can include it.
#include "fracmfg/exec/cuda_devices.hpp"

namespace fracmfg::exec::cuda {
/// Every visible device's static properties; creates no context (free memory not read).
CudaStatus probe();
/// Free and total memory of `device`, made current (this creates its context if it has
/// none). Returns an empty string on success, else the CUDA error text.
std::string free_memory(int device, std::size_t& free_bytes, std::size_t& total_bytes);
/// Returns an empty string on success, else the CUDA error text.
std::string axpy(int device, double a, const double* x, double* y, std::size_t n);
}  // namespace fracmfg::exec::cuda
