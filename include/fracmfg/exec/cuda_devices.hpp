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
  /// Bytes free. probe_cuda() does not measure it (that would create a CUDA context on
  /// every device): it is 0 with free_memory_measured false until cuda_free_memory() is
  /// called for the rank's own device (exec::Selector does so lazily). A YAML description
  /// sets it (free_gb, default memory_gb) and marks it measured.
  std::size_t free_memory = 0;
  bool free_memory_measured = false;
};

struct CudaStatus {
  bool compiled = false;    ///< this build contains the CUDA backend
  int runtime_version = 0;  ///< e.g. 13000
  int driver_version = 0;   ///< 0 without a driver
  std::string status;       ///< "ok" or why no device can be used
  std::vector<CudaDevice> devices;
};

/// Queries the CUDA runtime (not collective): device count and each device's static
/// properties (name, capability, multiprocessors, total memory) through
/// cudaGetDeviceProperties, which needs no context. It creates no CUDA context: a context
/// costs ~300 MB of device memory and up to seconds on each device, and every rank of a node
/// probes. Free memory is not read (see CudaDevice::free_memory).
CudaStatus probe_cuda();

/// Free memory of `device` in bytes, measured now (cudaMemGetInfo). Makes the device
/// current and creates its context if it has none: call it only for the rank's own device,
/// after placement. Throws NotCompiled without CUDA and Error when the runtime refuses.
std::size_t cuda_free_memory(int device);

/// Runs y = a*x + y for n elements on device `device` and returns the device result; used
/// as a smoke test of the CUDA build. Throws NotCompiled without CUDA and Error when the
/// device cannot run it.
std::vector<double> cuda_axpy(int device, double a, const std::vector<double>& x,
                              const std::vector<double>& y);

}  // namespace fracmfg::exec
