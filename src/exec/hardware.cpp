#include "fracmfg/exec/hardware.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sched.h>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

#include "fracmfg/core/environment.hpp"
#include "fracmfg/core/error.hpp"

namespace fracmfg::exec {

namespace {

std::string machine_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown-host";
  return buf;
}

int affinity_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// MemAvailable from /proc/meminfo (kB), 0 when absent.
std::size_t memory_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t value = 0;
  std::string unit;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return value * 1024;
  }
  return 0;
}

std::size_t memory_total() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

// Frees a communicator on scope exit.
class CommGuard {
 public:
  explicit CommGuard(MPI_Comm c) : comm_(c) {}
  CommGuard(const CommGuard&) = delete;
  CommGuard& operator=(const CommGuard&) = delete;
  ~CommGuard() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

 private:
  MPI_Comm comm_;
};

std::string gib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

Hardware Hardware::probe(MPI_Comm comm) {
  Hardware hw;
  hw.source = "probe";
  hw.probed = true;
  hw.host_name = machine_name();
  hw.host_cores = affinity_cores();
  hw.host_cpus_online = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  hw.host_memory = memory_total();
  hw.host_memory_available = memory_available();
  hw.kokkos_host_space = core::Environment::kokkos_host_space();
  hw.kokkos_host_concurrency = std::max(1, core::Environment::kokkos_host_concurrency());

  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
    throw Error("Hardware::probe: MPI_Comm_split_type failed");
  }
  CommGuard guard(node);
  MPI_Comm_rank(node, &hw.node_rank);
  MPI_Comm_size(node, &hw.node_size);

  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v != nullptr) {
    hw.cuda_visible_devices = std::string(v);
  }
  CudaStatus cuda = probe_cuda();
  hw.cuda_compiled = cuda.compiled;
  hw.cuda_runtime_version = cuda.runtime_version;
  hw.cuda_driver_version = cuda.driver_version;
  hw.cuda_status = cuda.status;
  hw.gpus = std::move(cuda.devices);
  return hw;
}

std::string Hardware::describe() const {
  std::ostringstream os;
  os << "host " << host_name << " (" << source << "): " << host_cores << " cores";
  if (host_cpus_online != host_cores) os << " of " << host_cpus_online;
  if (host_memory > 0) {
    os << ", " << gib(host_memory) << " memory";
    if (host_memory_available > 0) os << " (" << gib(host_memory_available) << " available)";
  }
  os << "\n  kokkos host space " << (kokkos_host_space.empty() ? "?" : kokkos_host_space)
     << ", concurrency " << kokkos_host_concurrency << "\n  node rank " << node_rank << " of "
     << node_size << "\n  cuda: " << (cuda_compiled ? "compiled" : "not compiled");
  if (cuda_runtime_version > 0) os << ", runtime " << cuda_runtime_version;
  if (cuda_driver_version > 0) os << ", driver " << cuda_driver_version;
  if (!cuda_status.empty()) os << ", " << cuda_status;
  if (cuda_visible_devices) os << ", CUDA_VISIBLE_DEVICES=" << *cuda_visible_devices;
  for (const CudaDevice& d : gpus) {
    os << "\n  gpu " << d.id << ": " << d.name << ", cc " << d.cc_major << '.' << d.cc_minor << ", "
       << d.multiprocessors << " multiprocessors, " << gib(d.total_memory) << " ("
       << (d.free_memory_measured ? gib(d.free_memory) + " free"
                                  : std::string("free memory not measured"))
       << "), score " << device_score(d);
  }
  return os.str();
}

int cuda_cores_per_multiprocessor(int cc_major, int cc_minor) {
  const int cc = cc_major * 10 + cc_minor;
  switch (cc) {
    case 30:
    case 32:
    case 35:
    case 37: return 192;
    case 50:
    case 52:
    case 53: return 128;
    case 60: return 64;
    case 61:
    case 62: return 128;
    case 70:
    case 72:
    case 75:
    case 80: return 64;
    default: return cc >= 86 ? 128 : 64;
  }
}

double device_score(const CudaDevice& device) {
  const double s = static_cast<double>(device.multiprocessors) *
                   cuda_cores_per_multiprocessor(device.cc_major, device.cc_minor);
  return std::max(1.0, s);
}

}  // namespace fracmfg::exec
