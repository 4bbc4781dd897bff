// The `fpde` runner of the fracmfg driver: time- and space-fractional diffusion. Sample runs:
//
//   mpiexec -n 2 fracmfg run inputs/fpde_subdiffusion_1d-ci.yaml
//   mpiexec -n 2 fracmfg run inputs/fpde_subdiffusion_2d-ci.yaml -- -fpde_pc_type gamg
//   mpiexec -n 2 fracmfg run inputs/fpde_riesz_1d-ci.yaml -- -fpde_ksp_monitor
//   mpiexec -n 2 fracmfg run inputs/fpde_subdiffusion_1d.yaml -- -fpde_stop_at 200
//   mpiexec -n 3 fracmfg run inputs/fpde_subdiffusion_1d.yaml -- -fpde_restart
//   export FRACMFG_RESTART=results/fpde_subdiffusion_1d.chk.h5
//   mpiexec -n 3 fracmfg run inputs/fpde_subdiffusion_1d.yaml
//
// The run is the library's (frac::run_fpde_deck, include/fracmfg/frac/fpde_run.hpp): the
// checks (the checkpoint to resume from, the output paths and their free space), the solver
// and its restart, the time loop with outputs, checkpoints (-fpde_stop_at <step> stops early
// with one) and stop signals (SIGUSR1, SIGTERM, SIGINT: a checkpoint and exit code 75),
// commit and report. The checkpoint to resume from is FRACMFG_RESTART or -fpde_restart
// [file] (no file: the deck's output.checkpoint_file).
#include "fracmfg/frac/fpde_run.hpp"
#include "runners.hpp"

namespace fracmfg::driver {

int run_fpde(core::Environment& env, const io::Deck& deck, exec::Selector& selector) {
  // The rank's selector places the time-fractional history update (host or device).
  frac::FpdeRunOptions options = frac::fpde_run_options_from_petsc(env.comm(), deck);
  options.selector = &selector;
  frac::run_fpde_deck(env.comm(), deck, env.log(), options);
  return 0;
}

}  // namespace fracmfg::driver
