// Device selection for a rank's placement (exec::activate_device).
#include <cuda_runtime.h>

#include <string>

#include "exec/cuda/device_select.hpp"

namespace fracmfg::exec::cuda {

std::string select_device(int device) {
  cudaError_t e = cudaSetDevice(device);
  // cudaFree(0) forces the context to exist now, so a broken device shows here and not in
  // the first kernel call.
  if (e == cudaSuccess) e = cudaFree(nullptr);
  if (e == cudaSuccess) return {};
  cudaGetLastError();
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

}  // namespace fracmfg::exec::cuda
