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
// Steps: 0. check the free space for the results and checkpoints (frac::fpde_output_bytes);
// then frac::run_fpde_deck: 1. check the output paths and the checkpoint to resume from
// (FRACMFG_RESTART, or -fpde_restart [file]: no file means the deck's
// output.checkpoint_file; include/fracmfg/io/restart_source.hpp), 2. build the solver and restore
// the checkpoint, 3. create the output file, 4. step in time, writing u every output.every steps
// and checkpoints every output.checkpoint_every steps (-fpde_stop_at <step> stops early with
// a checkpoint; SIGUSR1, SIGTERM or SIGINT stop after the current step with a checkpoint and
// exit code 75), 5. commit and report.
#include <vector>

#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/frac/fpde_run.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "fracmfg/io/restart_source.hpp"
#include "runners.hpp"

namespace fracmfg::driver {

int run_fpde(core::Environment& env, const io::Deck& deck, exec::Selector& /*selector*/) {
  // The fpde kernels (history update, FFT products) run on the host; the selector is not
  // consulted.
  frac::FpdeRunOptions options = frac::fpde_run_options_from_petsc(env.comm(), deck);
  const io::RestartSource restart =
      io::restart_source(env.comm(), "-fpde_restart", deck.output().checkpoint_file);
  io::check_checkpoint(env.comm(), restart, "fpde");
  io::check_restart_keeps_outputs(env.comm(), restart, deck.output());
  options.restart = restart.path;
  // A file system without room for the results and checkpoints fails now, before the solver
  // is built.
  const io::OutputConfig output = deck.output();
  const io::OutputBytes bytes = frac::fpde_output_bytes(deck.fpde(), output, options.stop_at);
  std::vector<io::OutputSpace> files = {{output.file, bytes.results}};
  if (bytes.checkpoints > 0) files.push_back({output.checkpoint_file, bytes.checkpoints});
  core::collective(env.comm(), [&] { io::H5Writer::check_output_paths(env.comm(), files); });
  try {
    frac::run_fpde_deck(env.comm(), deck, env.log(), options);
  } catch (const io::WriteError& e) {
    // Thrown by every rank together (a field or checkpoint that could not be written, the
    // temporary file removed): one message from rank 0 and exit code 5, no abort.
    throw core::CollectiveError(e.what(), ExitCode::io, 0);
  }
  return 0;
}

}  // namespace fracmfg::driver
