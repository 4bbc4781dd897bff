#pragma once
// `fracmfg info`: build options, ranks and the hardware each rank sees.
#include <mpi.h>

#include <string>
#include <vector>

#include "fracmfg/core/environment.hpp"

namespace fracmfg::driver {
/// Collective: gathers every rank's view (hardware, GPU placement, learned CPU/GPU
/// crossovers) to rank 0, which prints it. With a hardware description file, every rank
/// takes that description instead of probing. Returns the exit code.
int print_info(core::Environment& env, const std::string& assume_hardware_file,
               int max_ranks_per_gpu);

/// Every rank's string, on rank 0 in rank order (empty elsewhere). Collective on comm.
std::vector<std::string> gather_strings(MPI_Comm comm, const std::string& mine);
}  // namespace fracmfg::driver
