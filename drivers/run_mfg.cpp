// The `mfg` runner of the fracmfg driver. Sample runs:
//
//   mpiexec -n 2 fracmfg run inputs/crowd_1d-ci.yaml
//   mpiexec -n 2 fracmfg run inputs/crowd_1d.yaml -- -mfg_hjb_snes_monitor
//   mpiexec -n 3 fracmfg run inputs/crowd_1d.yaml -- -mfg_restart results/crowd_1d.chk.h5
//   FRACMFG_RESTART=results/crowd_1d.chk.h5 mpiexec -n 3 fracmfg run inputs/crowd_1d.yaml
//
// Steps: 1. check the output paths (and the free space for mfg::mfg_output_bytes) and the
// checkpoint to resume from (FRACMFG_RESTART or
// -mfg_restart <file>, include/fracmfg/io/restart_source.hpp), 2. build the solver (model, HJB,
// Fokker-Planck), 3. restore the checkpoint, 4. iterate to convergence (checkpoints every
// output.checkpoint_every iterations; SIGUSR1, SIGTERM or SIGINT write a checkpoint to
// output.checkpoint_file after the current iteration and end the run with exit code 75),
// 5. write the results, 6. report non-convergence as a numerical failure (exit code 4) after
// the results are written.
#include <string>
#include <vector>

#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/interrupt.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "fracmfg/io/restart_source.hpp"
#include "fracmfg/mfg/output_size.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "runners.hpp"

namespace fracmfg::driver {

namespace {

// Runs fn and turns an io::WriteError (thrown by every rank of the file's communicator, here
// the run's, together) into the driver's collective error: one line from rank 0, exit code
// 5 on every rank, no abort.
template <class Fn>
void shared_write_errors(Fn&& fn) {
  try {
    fn();
  } catch (const io::WriteError& e) {
    throw core::CollectiveError(e.what(), ExitCode::io, 0);
  }
}

}  // namespace

int run_mfg(core::Environment& env, const io::Deck& deck, exec::Selector& selector) {
  const io::MfgConfig config = deck.mfg();
  const io::OutputConfig output = deck.output();
  // 1. A bad output path or checkpoint, or a file system without room for them, fails now,
  //    not after the solve.
  const io::OutputBytes bytes = mfg::mfg_output_bytes(config, output);
  std::vector<io::OutputSpace> files = {{output.file, bytes.results}};
  if (output.checkpoint_every > 0) files.push_back({output.checkpoint_file, bytes.checkpoints});
  core::collective(env.comm(), [&] { io::H5Writer::check_output_paths(env.comm(), files); });
  const io::RestartSource restart = io::restart_source(env.comm(), "-mfg_restart");
  io::check_checkpoint(env.comm(), restart, "mfg");
  io::check_restart_keeps_outputs(env.comm(), restart, deck.output());
  // 2. Build. From here on a stop signal ends the run after the current iteration, with a
  //    checkpoint, instead of killing it.
  mfg::Solver solver(env.comm(), config, &selector, env.log());
  core::InterruptGuard interrupts;
  // 3. Restart.
  if (!restart.empty()) solver.restart(restart.path);
  // 4. Solve. A checkpoint that cannot be written (disk full) is an io::WriteError, thrown by
  //    every rank together: it ends the run with one message (exit code 5); the previous
  //    checkpoint stays as it was.
  mfg::SolveResult result;
  shared_write_errors([&] {
    result = solver.solve({output.checkpoint_file, output.checkpoint_every});
  });
  // 5. Write.
  shared_write_errors([&] {
    io::H5Writer out(env.comm(), output.file, {"mfg", deck.text(), deck.resolved_yaml()});
    solver.write(out, output.every);
    out.commit();
  });
  env.log().info("mfg: results written to ", output.file);
  // 6. Report.
  if (!result.converged) {
    throw core::CollectiveError(
        "mfg: no convergence in " + std::to_string(result.iterations) +
            " iterations (relative change of u " + std::to_string(result.change_u) + ", of m " +
            std::to_string(result.change_m) + ", tolerance " +
            std::to_string(config.iteration.tolerance) + "); results written to " + output.file,
        ExitCode::numerical, 0);
  }
  return 0;
}

}  // namespace fracmfg::driver
