#pragma once
// The CUDA objects of the project, each owned by one RAII handle (nvcc only; the CUDA
// member of the handle family beside core/petsc_handles.hpp, kernels/fftw_handles.hpp and
// io/h5_handles.hpp): device memory (DeviceArray), the current device (DeviceGuard,
// QuietDeviceGuard), cuFFT plans (FftPlan) and cuSPARSE handles (SparseHandle); with them
// the error checks and launch helpers every CUDA translation unit uses. Every failure
// throws fracmfg::Error whose message starts with "CUDA" and carries the library's error
// text, so a caller can fall back to the cpu backend. Destruction never throws.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cufft.h>
#include <cusparse.h>
#include <memory>
#include <string>
#include <utility>

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

/// Throws fracmfg::Error("CUDA cuFFT error in <what>: ...") unless r is CUFFT_SUCCESS.
inline void cufft_check(cufftResult r, const char* what) {
  if (r == CUFFT_SUCCESS) return;
  throw Error(std::string("CUDA cuFFT error in ") + what + ": cufftResult " +
              std::to_string(static_cast<int>(r)));
}

/// Throws fracmfg::Error("CUDA cuSPARSE error in <what>: ...") unless s is success.
inline void cusparse_check(cusparseStatus_t s, const char* what) {
  if (s == CUSPARSE_STATUS_SUCCESS) return;
  throw Error(std::string("CUDA cuSPARSE error in ") + what + ": " + cusparseGetErrorString(s));
}

// --- device memory ---------------------------------------------------------------------------

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

// --- the current device ----------------------------------------------------------------------

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

/// DeviceGuard for destructors: errors are ignored (destruction must not throw, and a dead
/// context has nothing left to free).
class QuietDeviceGuard {
 public:
  explicit QuietDeviceGuard(int device) {
    if (cudaGetDevice(&previous_) == cudaSuccess && previous_ != device) {
      switched_ = cudaSetDevice(device) == cudaSuccess;
    }
    cudaGetLastError();
  }
  QuietDeviceGuard(const QuietDeviceGuard&) = delete;
  QuietDeviceGuard& operator=(const QuietDeviceGuard&) = delete;
  ~QuietDeviceGuard() {
    if (switched_) cudaSetDevice(previous_);
    cudaGetLastError();
  }

 private:
  int previous_ = 0;
  bool switched_ = false;
};

// --- library handles ---------------------------------------------------------------------------

/// Owner of one object of a CUDA library (Object: the library's handle type; Destroy: its
/// destroy function) created on `device`. Destroyed with that device current, errors
/// ignored. Move-only; a default-constructed handle owns nothing.
template <class Object, auto Destroy>
class CudaHandle {
 public:
  CudaHandle() = default;
  CudaHandle(Object object, int device) : object_(object), device_(device), owned_(true) {}
  CudaHandle(const CudaHandle&) = delete;
  CudaHandle& operator=(const CudaHandle&) = delete;
  CudaHandle(CudaHandle&& other) noexcept
      : object_(other.object_),
        device_(other.device_),
        owned_(std::exchange(other.owned_, false)) {}
  CudaHandle& operator=(CudaHandle&& other) noexcept {
    if (this != &other) {
      reset();
      object_ = other.object_;
      device_ = other.device_;
      owned_ = std::exchange(other.owned_, false);
    }
    return *this;
  }
  ~CudaHandle() { reset(); }

  Object get() const { return object_; }
  int device() const { return device_; }
  bool valid() const { return owned_; }
  void reset() noexcept {
    if (!owned_) return;
    owned_ = false;
    const QuietDeviceGuard guard(device_);
    Destroy(object_);
  }

 private:
  Object object_{};
  int device_ = 0;
  bool owned_ = false;
};

using FftPlan = CudaHandle<cufftHandle, &cufftDestroy>;
using SparseHandle = CudaHandle<cusparseHandle_t, &cusparseDestroy>;

/// A new cuSPARSE handle on `device` (current).
inline SparseHandle create_sparse_handle(int device) {
  cusparseHandle_t h = nullptr;
  cusparse_check(cusparseCreate(&h), "cusparseCreate");
  return SparseHandle(h, device);
}

// --- launches ----------------------------------------------------------------------------------

/// The index of this thread in a one-dimensional grid, and the grid's thread count: a
/// grid-stride loop is for (i = global_thread(); i < n; i += grid_threads()).
__device__ inline std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t grid_threads() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

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
