#pragma once
// Host-callable device selection of the CUDA backend (implemented in device_select.cu).
// Plain C++ so that g++-compiled dispatch code in src/exec can include it.
#include <string>

namespace fracmfg::exec::cuda {
/// Makes `device` current for the calling host thread (cudaSetDevice) and creates its
/// context: the one context a rank creates, on the device it was placed on (the probe
/// creates none). Returns an empty string on success, else the CUDA error text.
std::string select_device(int device);
}  // namespace fracmfg::exec::cuda
