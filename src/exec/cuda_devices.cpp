#include "fracmfg/exec/cuda_devices.hpp"

#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"

#if FRACMFG_HAVE_CUDA
#include "exec/cuda/cuda_runtime.hpp"
#endif

namespace fracmfg::exec {

CudaStatus probe_cuda() {
#if FRACMFG_HAVE_CUDA
  return cuda::probe();
#else
  CudaStatus s;
  s.status = "CUDA backend not compiled";
  return s;
#endif
}

std::size_t cuda_free_memory(int device) {
#if FRACMFG_HAVE_CUDA
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  const std::string err = cuda::free_memory(device, free_bytes, total_bytes);
  if (!err.empty()) {
    throw Error("cannot read the free memory of CUDA device " + std::to_string(device) + ": " +
                err);
  }
  return free_bytes;
#else
  (void)device;
  throw NotCompiled("the CUDA backend", {"cpu"});
#endif
}

std::vector<double> cuda_axpy(int device, double a, const std::vector<double>& x,
                              const std::vector<double>& y) {
  if (x.size() != y.size()) throw Error("cuda_axpy: x and y differ in length");
#if FRACMFG_HAVE_CUDA
  std::vector<double> out = y;
  const std::string err = cuda::axpy(device, a, x.data(), out.data(), x.size());
  if (!err.empty()) throw Error("cuda_axpy on device " + std::to_string(device) + ": " + err);
  return out;
#else
  (void)device;
  (void)a;
  throw NotCompiled("the CUDA backend", {"cpu"});
#endif
}

}  // namespace fracmfg::exec
