// Device selection for a rank's placement (exec::activate_device).
#include <cuda_runtime.h>

#include <string>

#include "exec/cuda/device_select.hpp"
#include "kernels/cuda/cuda_handles.hpp"

namespace fracmfg::exec::cuda {

std::string select_device(int device) {
  cudaError_t e = cudaSetDevice(device);
  // cudaFree(0) forces the context to exist now, so a broken device shows here and not in
  // the first kernel call.
  if (e == cudaSuccess) e = cudaFree(nullptr);
  if (e == cudaSuccess) return {};
  cudaGetLastError();
  return kernels::cuda::cuda_error_text(e);
}

}  // namespace fracmfg::exec::cuda
