#pragma once
// `fracmfg info`: build options, ranks and the hardware each rank sees.
#include <string>

#include "fracmfg/core/environment.hpp"

namespace fracmfg::driver {
/// Collective: gathers every rank's view (hardware, GPU placement, learned CPU/GPU
/// crossovers) to rank 0, which prints it. With a hardware description file, every rank
/// takes that description instead of probing. Returns the exit code.
int print_info(core::Environment& env, const std::string& assume_hardware_file,
               int max_ranks_per_gpu);
}  // namespace fracmfg::driver
