#include "driver_info.hpp"

#include <hdf5.h>
#include <mpi.h>
#include <petscsys.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "fracmfg/config.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/huge_pages.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/selector.hpp"

namespace fracmfg::driver {

namespace {
// What this rank sees and would decide: its hardware (probed, or described by a YAML file),
// the GPU placement gives it, and the CPU/GPU crossover of every kernel the performance
// model has measurements for (from earlier runs with execution.learn).
std::string this_rank_view(const core::Environment& env, const std::string& assume_hardware_file,
                           int max_ranks_per_gpu) {
  const bool described = !assume_hardware_file.empty();
  exec::Hardware hw = described ? exec::Hardware::from_yaml_file(assume_hardware_file)
                                : exec::Hardware::probe(env.comm());
  exec::SelectorConfig config;
  config.max_ranks_per_gpu = max_ranks_per_gpu;
  config.activate_device = false;
  config.learn = false;
  std::ostringstream os;
  os << "rank " << env.rank() << (described ? " (described by " + assume_hardware_file + ")" : "")
     << ":\n";
  std::istringstream lines(hw.describe());
  for (std::string line; std::getline(lines, line);) os << "    " << line << '\n';
  exec::Selector selector(std::move(hw), config, core::Logger());
  os << "    placement: " << exec::to_string(selector.device())
     << (selector.cuda_usable() ? " (" + selector.device_name() + ")" : "") << '\n';
  // Copy the model so that registering kernel names here leaves nothing behind.
  const exec::PerfModel model = selector.model();
  if (model.kernel_count() == 0) {
    os << "    performance model: no measurements yet (" << selector.perf_directory()
       << "); runs with execution.learn: true record them";
  } else {
    os << "    performance model (" << selector.perf_directory() << "):";
    for (std::size_t k = 0; k < model.kernel_count(); ++k) {
      const exec::KernelId id{static_cast<std::uint32_t>(k)};
      os << "\n      " << model.kernel_name(id) << ": " << model.samples(id, exec::Backend::cpu)
         << " cpu / " << model.samples(id, exec::Backend::cuda) << " cuda samples";
      if (!selector.cuda_usable()) continue;  // no GPU on this rank: nothing to cross over
      if (model.samples(id, exec::Backend::cuda) == 0) {
        os << ", cuda not measured yet";
      } else if (const auto n = model.crossover(id)) {
        os << ", GPU faster above n = " << static_cast<long long>(*n);
      } else {
        os << ", no crossover (one backend wins at every size)";
      }
    }
  }
  return os.str();
}

}  // namespace

std::vector<std::string> gather_strings(MPI_Comm comm, const std::string& mine) {
  int size = 1;
  int rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(size));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
  std::vector<int> displs(static_cast<size_t>(size), 0);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[static_cast<size_t>(r)] = total;
    total += lens[static_cast<size_t>(r)];
  }
  std::vector<char> all(static_cast<size_t>(rank == 0 ? total : 0) + 1);
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0,
              comm);
  std::vector<std::string> out;
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      out.emplace_back(all.data() + displs[static_cast<size_t>(r)],
                       static_cast<size_t>(lens[static_cast<size_t>(r)]));
    }
  }
  return out;
}
int print_info(core::Environment& env, const std::string& assume_hardware_file,
               int max_ranks_per_gpu) {
  std::string view;
  core::collective(env.comm(),
                   [&] { view = this_rank_view(env, assume_hardware_file, max_ranks_per_gpu); });
  const auto views = gather_strings(env.comm(), view);
  if (env.rank() != 0) return 0;
  char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(mpi_version, &len);
  std::string mpi_first_line(mpi_version);
  mpi_first_line = mpi_first_line.substr(0, mpi_first_line.find_first_of(",\n"));
  char petsc_version[128] = {0};
  PetscGetVersion(petsc_version, sizeof(petsc_version));
  unsigned h5_major = 0, h5_minor = 0, h5_release = 0;
  H5get_libversion(&h5_major, &h5_minor, &h5_release);
  const exec::CudaStatus cuda = exec::probe_cuda();
  std::printf("fracmfg %s (%s, %s build)\n", FRACMFG_VERSION_STRING, FRACMFG_GIT_REVISION,
              FRACMFG_BUILD_TYPE);
  std::printf("  backends: cpu (Kokkos %s)%s\n", core::Environment::kokkos_host_space().c_str(),
              cuda.compiled ? ", cuda" : "  [cuda not compiled]");
  if (cuda.compiled) {
    std::printf("  CUDA runtime %d.%d, driver %d.%d\n", cuda.runtime_version / 1000,
                (cuda.runtime_version % 1000) / 10, cuda.driver_version / 1000,
                (cuda.driver_version % 1000) / 10);
  }
  std::printf("  %s\n  %s\n  HDF5 %u.%u.%u (parallel)\n", petsc_version, mpi_first_line.c_str(),
              h5_major, h5_minor, h5_release);
  std::printf("  huge pages for large allocations: %s\n", core::huge_pages_status().c_str());
  std::printf("ranks: %d\n", env.size());
  for (const auto& v : views) std::printf("  %s\n", v.c_str());
  return 0;
}

}  // namespace fracmfg::driver
