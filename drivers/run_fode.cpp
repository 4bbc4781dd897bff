// `fracmfg run` for `problem: fode` decks: fractional ODE systems D^a y = f(t, y).
//
//   fracmfg run inputs/fode_relaxation-ci.yaml
//   mpiexec -n 2 fracmfg run inputs/fode_relaxation.yaml
//   fracmfg run inputs/fode_nonlinear.yaml
//
// Steps (frac::run_fode_deck): 1. the solver from deck.fode(), 2. the output file checked
// and created, 3. the solve with progress lines, writing y every output.every steps,
// 4. commit and summary. fode runs are short and write no checkpoint: FRACMFG_RESTART is
// refused (exit code 2) rather than ignored, and a stop signal ends the run at once.
#include "fracmfg/core/progress.hpp"
#include "fracmfg/frac/fode_run.hpp"
#include "fracmfg/io/restart_source.hpp"
#include "runners.hpp"

namespace fracmfg::driver {

int run_fode(core::Environment& env, const io::Deck& deck, exec::Selector& selector) {
  io::refuse_restart(env.comm(), "fode",
                     "a fode run is short and writes no checkpoint, so there is none to continue");
  // FRACMFG_PROGRESS_SECONDS as for the other solvers (0: every step; the solver's 0 means
  // no lines, hence the smallest positive interval).
  const double interval = core::progress_interval_from_environment(env.log());
  frac::run_fode_deck(env.comm(), deck, &selector, env.log(), {}, interval > 0.0 ? interval : 1e-9);
  return 0;
}

}  // namespace fracmfg::driver
