// The `mfg` runner of the fracmfg driver. Sample runs:
//
//   mpiexec -n 2 fracmfg run inputs/crowd_1d-ci.yaml
//   mpiexec -n 2 fracmfg run inputs/crowd_1d.yaml -- -mfg_hjb_direct false -mfg_hjb_snes_monitor
//   mpiexec -n 3 fracmfg run inputs/crowd_1d.yaml -- -mfg_restart results/crowd_1d.chk.h5
//   FRACMFG_RESTART=results/crowd_1d.chk.h5 mpiexec -n 3 fracmfg run inputs/crowd_1d.yaml
//
// The run is the library's (mfg::run_mfg_deck, include/fracmfg/mfg/run.hpp): checks, build,
// restart, fixed point with checkpoints and stop signals (exit code 75), results, and
// non-convergence reported as a numerical failure (exit code 4) after the results are
// written.
#include "fracmfg/mfg/run.hpp"
#include "runners.hpp"

namespace fracmfg::driver {

int run_mfg(core::Environment& env, const io::Deck& deck, exec::Selector& selector) {
  const mfg::MfgRunOptions options = mfg::mfg_run_options_from_petsc(env.comm(), deck);
  mfg::run_mfg_deck(env.comm(), deck, &selector, env.log(), options);
  return 0;
}

}  // namespace fracmfg::driver
