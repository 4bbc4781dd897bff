#pragma once
// What the CUDA runtime reports on this rank. Always callable: in a build without CUDA it
// answers compiled == false; without a driver or a visible device, devices is empty and
// `status` says why (never an error).

#include <cstddef>
#include <string>
#include <vector>

namespace fracmfg::exec {

struct CudaDevice {
  int id = 0;  ///< runtime device index (after CUDA_VISIBLE_DEVICES)
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int multiprocessors = 0;
  std::size_t total_memory = 0;  ///< bytes
  std::size_t free_memory = 0;   ///< bytes, at probe time
};

struct CudaStatus {
  bool compiled = false;    ///< this build contains the CUDA backend
  int runtime_version = 0;  ///< e.g. 13000
  int driver_version = 0;   ///< 0 without a driver
  std::string status;       ///< "ok" or why no device can be used
  std::vector<CudaDevice> devices;
};

/// Queries the CUDA runtime (not collective).
CudaStatus probe_cuda();

/// Runs y = a*x + y for n elements on device `device` and returns the device result; used
/// as a smoke test of the CUDA build. Throws NotCompiled without CUDA and Error when the
/// device cannot run it.
std::vector<double> cuda_axpy(int device, double a, const std::vector<double>& x,
                              const std::vector<double>& y);

}  // namespace fracmfg::exec
