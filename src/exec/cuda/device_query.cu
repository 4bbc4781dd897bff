// CUDA runtime probe and a smoke-test kernel. No Kokkos headers here: Debian's Kokkos is a
// host-only g++ build.
//
// The probe creates no CUDA context. A context costs ~300 MB of device memory and up to
// seconds to create; probing every visible device from every rank of a node (8 ranks x 8
// GPUs) would create 64 of them and fill the devices before any work. cudaGetDeviceCount,
// cudaGetDeviceProperties and cudaDeviceGetAttribute read static properties through the
// driver without a context; cudaMemGetInfo (free memory) needs one, so free memory is read
// only for the device a rank is placed on (free_memory(), after that device was made
// current by exec::activate_device), never here.
#include <cuda_runtime.h>

#include <string>

#include "exec/cuda/cuda_runtime.hpp"
#include "kernels/cuda/cuda_handles.hpp"

namespace fracmfg::exec::cuda {

namespace {
__global__ void axpy_kernel(double a, const double* x, double* y, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

using kernels::cuda::cuda_error_text;
}  // namespace

CudaStatus probe() {
  CudaStatus s;
  s.compiled = true;
  cudaRuntimeGetVersion(&s.runtime_version);
  cudaDriverGetVersion(&s.driver_version);
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    // cudaErrorInsufficientDriver / cudaErrorNoDevice: no usable GPU, not an error.
    s.status = cuda_error_text(e);
    cudaGetLastError();
    return s;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    CudaDevice dev;
    dev.id = d;
    dev.name = p.name;
    dev.cc_major = p.major;
    dev.cc_minor = p.minor;
    dev.multiprocessors = p.multiProcessorCount;
    dev.total_memory = p.totalGlobalMem;
    dev.free_memory = 0;  // not measured: needs a context (see the top of this file)
    dev.free_memory_measured = false;
    s.devices.push_back(dev);
  }
  s.status = count > 0 ? "ok" : "no CUDA device visible";
  return s;
}

std::string free_memory(int device, std::size_t& free_bytes, std::size_t& total_bytes) {
  cudaError_t e = cudaSetDevice(device);  // a no-op when the rank's device is current
  if (e == cudaSuccess) e = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (e == cudaSuccess) return {};
  cudaGetLastError();
  return cuda_error_text(e);
}

std::string axpy(int device, double a, const double* x, double* y, std::size_t n) {
  namespace kc = kernels::cuda;
  try {
    kc::cuda_check(cudaSetDevice(device), "cudaSetDevice");
    const kc::DeviceArray<double> dx = kc::device_alloc<double>(n, "cudaMalloc (x)");
    const kc::DeviceArray<double> dy = kc::device_alloc<double>(n, "cudaMalloc (y)");
    kc::copy_to_device(dx.get(), x, n, "copy of x");
    kc::copy_to_device(dy.get(), y, n, "copy of y");
    const unsigned threads = 256;
    const unsigned blocks = static_cast<unsigned>((n + threads - 1) / threads);
    if (n > 0) axpy_kernel<<<blocks, threads>>>(a, dx.get(), dy.get(), n);
    kc::cuda_sync_check("axpy kernel");
    kc::copy_to_host(y, dy.get(), n, "copy of y back");
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

}  // namespace fracmfg::exec::cuda
