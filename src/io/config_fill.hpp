#pragma once
// Private to the deck reader: typed configs from a validated value tree.

#include <string>

#include "fracmfg/io/config.hpp"
#include "io/deck_value.hpp"

namespace fracmfg::io::detail {

Problem problem_of(const Value& root);
ExecutionConfig execution_config(const Value& root);
OutputConfig output_config(const Value& root);
LoggingConfig logging_config(const Value& root);
std::string petsc_options(const Value& root);
MfgConfig mfg_config(const Value& root);
FodeConfig fode_config(const Value& root);
FpdeConfig fpde_config(const Value& root);

}  // namespace fracmfg::io::detail
