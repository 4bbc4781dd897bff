#pragma once
// Selector configurations shared by the exec tests.

#include <string>

#include "fracmfg/exec/selector.hpp"

namespace fracmfg::test {

/// Host only, no environment variables, no device activated; the performance model is read
/// from and saved to `perf_dir` (nothing is persisted when it is empty).
inline exec::SelectorConfig host_selector_config(const std::string& perf_dir = {}) {
  exec::SelectorConfig c;
  c.backend = exec::BackendChoice::cpu;
  c.use_environment = false;
  c.persist = !perf_dir.empty();
  c.perf_dir = perf_dir;
  c.activate_device = false;
  return c;
}

}  // namespace fracmfg::test
