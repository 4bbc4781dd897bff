#pragma once
// RAII and error checking for the CUDA translation units of the node-local kernels (nvcc
// only). Every failure throws fracmfg::Error whose message starts with "CUDA" and carries
// the runtime's error name and text, so a caller can fall back to the host.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fracmfg/core/error.hpp"

namespace fracmfg::kernels::cuda {

inline std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

/// Throws fracmfg::Error("CUDA error in <what>: <name>: <text>") unless e is cudaSuccess.
inline void cuda_check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so later calls start clean
  throw Error(std::string("CUDA error in ") + what + ": " + cuda_error_text(e));
}

struct CudaFree {
  void operator()(void* p) const noexcept {
    if (p != nullptr) cudaFree(p);
  }
};

/// Device memory owned like a unique_ptr<T[]>; released with cudaFree.
template <class T>
using DeviceArray = std::unique_ptr<T[], CudaFree>;

template <class T>
DeviceArray<T> device_alloc(std::size_t count, const char* what) {
  void* p = nullptr;
  if (count > 0) cuda_check(cudaMalloc(&p, count * sizeof(T)), what);
  return DeviceArray<T>(static_cast<T*>(p));
}

template <class T>
void copy_to_device(T* dst, const T* src, std::size_t count, const char* what) {
  if (count > 0) cuda_check(cudaMemcpy(dst, src, count * sizeof(T), cudaMemcpyHostToDevice), what);
}

template <class T>
void copy_to_host(T* dst, const T* src, std::size_t count, const char* what) {
  if (count > 0) cuda_check(cudaMemcpy(dst, src, count * sizeof(T), cudaMemcpyDeviceToHost), what);
}

/// Makes `device` current for its lifetime and restores the previous device afterwards. The
/// rank's device is normally current already (exec::Selector sets it once); then neither
/// side calls cudaSetDevice.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    cuda_check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) {
      cuda_check(cudaSetDevice(device), "cudaSetDevice");
      switched_ = true;
    }
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() {
    if (switched_) cudaSetDevice(previous_);
  }

 private:
  int previous_ = 0;
  bool switched_ = false;
};

/// Checks the launch, then waits for the device and checks the execution.
inline void cuda_sync_check(const char* what) {
  cuda_check(cudaGetLastError(), what);
  cuda_check(cudaDeviceSynchronize(), what);
}

/// Blocks for a grid-stride loop over `count` items (capped; the kernels loop).
inline unsigned grid_blocks(std::int64_t count, unsigned threads) {
  const std::int64_t want = (count + threads - 1) / threads;
  const std::int64_t cap = 65535;
  return static_cast<unsigned>(want < 1 ? 1 : (want > cap ? cap : want));
}

}  // namespace fracmfg::kernels::cuda
