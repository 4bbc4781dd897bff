#pragma once
// `fracmfg info`: build options, ranks and the hardware each rank sees.
#include <string>

#include "fracmfg/core/environment.hpp"

namespace fracmfg::driver {
/// Collective: gathers every rank's view to rank 0, which prints it. Returns the exit code.
int print_info(core::Environment& env, const std::string& assume_hardware_file);
}  // namespace fracmfg::driver
