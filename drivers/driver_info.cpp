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
#include "fracmfg/exec/cuda_devices.hpp"

namespace fracmfg::driver {

namespace {
std::string this_rank_view(const core::Environment& env) {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::ostringstream os;
  os << "rank " << env.rank() << " on " << host << ": " << sysconf(_SC_NPROCESSORS_ONLN)
     << " cores, Kokkos " << core::Environment::kokkos_host_space() << " (concurrency "
     << core::Environment::kokkos_host_concurrency() << ")";
  const exec::CudaStatus cuda = exec::probe_cuda();
  if (cuda.devices.empty()) {
    os << ", no GPU (" << cuda.status << ")";
  } else {
    for (const auto& d : cuda.devices) {
      os << "\n    GPU " << d.id << ": " << d.name << ", compute " << d.cc_major << '.'
         << d.cc_minor << ", " << d.multiprocessors << " SMs, " << d.free_memory / (1 << 20) << '/'
         << d.total_memory / (1 << 20) << " MiB free";
    }
  }
  return os.str();
}

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
}  // namespace

int print_info(core::Environment& env, const std::string& assume_hardware_file) {
  (void)assume_hardware_file;
  const auto views = gather_strings(env.comm(), this_rank_view(env));
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
  std::printf("ranks: %d\n", env.size());
  for (const auto& v : views) std::printf("  %s\n", v.c_str());
  return 0;
}

}  // namespace fracmfg::driver
