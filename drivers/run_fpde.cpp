// The `fpde` runner of the fracmfg driver: time- and space-fractional diffusion. Sample runs:
//
//   mpiexec -n 2 fracmfg run inputs/fpde_subdiffusion_1d-ci.yaml
//   mpiexec -n 2 fracmfg run inputs/fpde_subdiffusion_2d-ci.yaml -- -fpde_pc_type gamg
//   mpiexec -n 2 fracmfg run inputs/fpde_riesz_1d-ci.yaml -- -fpde_ksp_monitor
//   mpiexec -n 2 fracmfg run inputs/fpde_subdiffusion_1d.yaml -- -fpde_stop_at 200
//   mpiexec -n 3 fracmfg run inputs/fpde_subdiffusion_1d.yaml -- -fpde_restart
//
// Steps (frac::run_fpde_deck): 1. check the output paths, 2. build the solver and restore a
// checkpoint when -fpde_restart [file] is given, 3. create the output file, 4. step in time,
// writing u every output.every steps and checkpoints every output.checkpoint_every steps
// (-fpde_stop_at <step> stops early with a checkpoint), 5. commit and report.
#include "fracmfg/frac/fpde_run.hpp"
#include "runners.hpp"

namespace fracmfg::driver {

int run_fpde(core::Environment& env, const io::Deck& deck, exec::Selector& /*selector*/) {
  // The fpde kernels (history update, FFT products) run on the host; the selector is not
  // consulted.
  frac::run_fpde_deck(env.comm(), deck, env.log(), frac::fpde_run_options_from_petsc(deck));
  return 0;
}

}  // namespace fracmfg::driver
