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
// Steps (frac::run_fpde_deck): 1. check the output paths and the checkpoint to resume from
// (FRACMFG_RESTART, or -fpde_restart [file]: no file means the deck's
// output.checkpoint_file; drivers/restart_source.hpp), 2. build the solver and restore the
// checkpoint, 3. create the output file, 4. step in time, writing u every output.every steps
// and checkpoints every output.checkpoint_every steps (-fpde_stop_at <step> stops early with
// a checkpoint; SIGUSR1, SIGTERM or SIGINT stop after the current step with a checkpoint and
// exit code 75), 5. commit and report.
#include "fracmfg/frac/fpde_run.hpp"
#include "restart_source.hpp"
#include "runners.hpp"

namespace fracmfg::driver {

int run_fpde(core::Environment& env, const io::Deck& deck, exec::Selector& /*selector*/) {
  // The fpde kernels (history update, FFT products) run on the host; the selector is not
  // consulted.
  frac::FpdeRunOptions options = frac::fpde_run_options_from_petsc(deck);
  const RestartSource restart =
      restart_source(env.comm(), "-fpde_restart", deck.output().checkpoint_file);
  check_checkpoint(env.comm(), restart, "fpde");
  options.restart = restart.path;
  frac::run_fpde_deck(env.comm(), deck, env.log(), options);
  return 0;
}

}  // namespace fracmfg::driver
