// The `mfg` runner of the fracmfg driver. Sample runs:
//
//   mpiexec -n 2 fracmfg run inputs/crowd_1d-ci.yaml
//   mpiexec -n 2 fracmfg run inputs/crowd_1d.yaml -- -mfg_hjb_snes_monitor
//   mpiexec -n 3 fracmfg run inputs/crowd_1d.yaml -- -mfg_restart results/crowd_1d.chk.h5
//
// Steps: 1. check the output path, 2. build the solver (model, HJB, Fokker-Planck),
// 3. restore a checkpoint when -mfg_restart <file> is given, 4. iterate to convergence
// (checkpoints every output.checkpoint_every iterations), 5. write the results, 6. report
// non-convergence as a numerical failure (exit code 4) after the results are written.
#include <petscsys.h>

#include <string>

#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "runners.hpp"

namespace fracmfg::driver {

int run_mfg(core::Environment& env, const io::Deck& deck, exec::Selector& selector) {
  const io::MfgConfig config = deck.mfg();
  const io::OutputConfig output = deck.output();
  // 1. A bad output path fails now, not after the solve.
  io::H5Writer::check_output_path(env.comm(), output.file);
  if (output.checkpoint_every > 0) {
    io::H5Writer::check_output_path(env.comm(), output.checkpoint_file);
  }
  // 2. Build.
  mfg::Solver solver(env.comm(), config, &selector, env.log());
  // 3. Restart.
  char restart[PETSC_MAX_PATH_LEN] = "";
  PetscBool has_restart = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(PetscOptionsGetString(nullptr, nullptr, "-mfg_restart", restart,
                                            sizeof restart, &has_restart));
  if (has_restart) solver.restart(restart);
  // 4. Solve.
  const mfg::SolveResult result = solver.solve({output.checkpoint_file, output.checkpoint_every});
  // 5. Write.
  io::H5Writer out(env.comm(), output.file, {"mfg", deck.text(), deck.resolved_yaml()});
  solver.write(out, output.every);
  out.commit();
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
