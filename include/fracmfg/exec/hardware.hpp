#pragma once
// exec::Hardware: what one rank can run on. Either measured (Hardware::probe, collective)
// or described in YAML (Hardware::from_yaml) so that decisions for another machine can be
// computed and tested anywhere, e.g. `fracmfg info --assume-hardware gpu_node.yaml`.
//
// A YAML description (every key optional, defaults in brackets; unknown keys are an error):
//
//   host_name: gpu-node-01          # [unknown-host]
//   host_cores: 64                  # CPUs this rank may use [1]
//   host_cpus_online: 128           # [host_cores]
//   host_memory_gb: 512             # GiB (2^30 bytes), like every *_gb key here [0]
//   host_memory_available_gb: 480   # [host_memory_gb]
//   kokkos_host_space: OpenMP       # [Serial]
//   kokkos_host_concurrency: 8      # [1]
//   node_rank: 3                    # this rank's index among the ranks of its node [0]
//   node_size: 8                    # ranks on the node [1]
//   cuda_compiled: true             # [whether this build has the CUDA backend]
//   cuda_runtime_version: 13000     # [0]
//   cuda_driver_version: 13000      # [0]
//   cuda_status: ok                 # [derived]
//   cuda_visible_devices: "0,1,2,3" # [unset]
//   gpus:                           # [none]; id defaults to the position in the list
//     - {name: NVIDIA A100-SXM4-40GB, cc: "8.0", multiprocessors: 108, memory_gb: 40,
//        free_gb: 39.5}             # free_gb defaults to memory_gb
//
// No driver or no visible device is not an error: `gpus` is empty and `cuda_status` says why.

#include <mpi.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "fracmfg/exec/cuda_devices.hpp"

namespace fracmfg::exec {

struct Hardware {
  /// "probe" or the name of the YAML description it was read from.
  std::string source = "probe";
  /// True only for a description measured on this machine by probe(); a described
  /// (injected) device is never made current.
  bool probed = false;

  std::string host_name;
  /// CPUs this rank may run on (its affinity mask), >= 1.
  int host_cores = 1;
  /// Hardware threads the machine has online (std::thread::hardware_concurrency).
  int host_cpus_online = 1;
  /// Physical memory of the host and the part currently available, bytes (0 = unknown).
  std::size_t host_memory = 0;
  std::size_t host_memory_available = 0;
  /// Kokkos' default host execution space and its concurrency.
  std::string kokkos_host_space;
  int kokkos_host_concurrency = 1;

  /// This rank's index among the ranks sharing its node, and how many there are
  /// (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED).
  int node_rank = 0;
  int node_size = 1;

  /// Whether the CUDA backend is available to the selector (the build's value when probed;
  /// settable in YAML so decisions for a CUDA machine can be computed in any build).
  bool cuda_compiled = false;
  int cuda_runtime_version = 0;
  int cuda_driver_version = 0;
  /// "ok" or why no device can be used.
  std::string cuda_status;
  /// The value of CUDA_VISIBLE_DEVICES (which the CUDA runtime honours), nullopt if unset.
  std::optional<std::string> cuda_visible_devices;
  /// Visible devices, by runtime index.
  std::vector<CudaDevice> gpus;

  /// Measures this rank's hardware. Collective on comm (for the node-local rank and size).
  static Hardware probe(MPI_Comm comm);
  /// Reads a YAML description; `name` (a file name) is used in error messages. Errors are
  /// DeckErrors carrying name:line:column and the key. Not collective.
  static Hardware from_yaml(const std::string& text, const std::string& name);
  /// Reads a YAML description from a file; IoError when it cannot be read.
  static Hardware from_yaml_file(const std::string& path);

  /// A few human-readable lines (host, cores, memory, Kokkos, node rank, CUDA, devices).
  std::string describe() const;
};

/// FP32 lanes per multiprocessor of a compute capability (the CUDA programming guide's
/// table: 192 for 3.x, 128 for 5.x, 64 for 6.0, 7.x and 8.0, 128 for 6.1/6.2 and 8.6 and
/// newer; an unknown capability counts as 64 below 8.6 and 128 above).
int cuda_cores_per_multiprocessor(int cc_major, int cc_minor);

/// The capability score used to weight GPU placement: multiprocessors x FP32 lanes per
/// multiprocessor, i.e. the device's CUDA core count (clock rates vary little between
/// parts of one generation and are not reported by the probe). Always >= 1.
double device_score(const CudaDevice& device);

}  // namespace fracmfg::exec
