#include "frac/fpde_stepper.hpp"

#include <algorithm>
#include <sstream>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "la/solve_check.hpp"

namespace fracmfg::frac {

void FpdeStepper::evaluate_source(std::int64_t m, std::vector<double>& out) {
  const FpdeProblem& problem = ctx_.problem;
  if (!problem.source_depends_on_time) {
    if (!source_cached_) {
      f_static_.resize(ctx_.grid.local_size());
      ctx_.grid.evaluate(problem.source, 0.0, f_static_.data());
      source_cached_ = true;
    }
    std::copy(f_static_.begin(), f_static_.end(), out.begin());
    return;
  }
  ctx_.grid.evaluate(problem.source, ctx_.mesh.time(m), out.data());
}

void FpdeStepper::record_linear(PetscInt iterations) {
  ctx_.stats.last_linear_iterations = static_cast<int>(iterations);
  ctx_.stats.linear_iterations += iterations;
}

void FpdeStepper::check_linear_solve(KSP ksp, Vec b, Vec x, std::int64_t m) {
  KSPConvergedReason reason;
  FRACMFG_PETSC_CHECK(KSPGetConvergedReason(ksp, &reason));
  PetscInt its = 0;
  FRACMFG_PETSC_CHECK(KSPGetIterationNumber(ksp, &its));
  record_linear(its);
  if (reason < 0) {
    std::ostringstream os;
    os << "fpde: the linear solve of step " << m << " failed (" << KSPConvergedReasons[reason]
       << " after " << its << " iterations)";
    solve_failed(os.str());
  }
  la::require_solved(ksp, b, x, "fpde: step " + std::to_string(m));
}

void FpdeStepper::solve_failed(const std::string& message) {
  throw core::CollectiveError(message, ExitCode::numerical, 0);
}

void FpdeStepper::set_initial_guess(KSP ksp) {
  FRACMFG_PETSC_CHECK(
      KSPSetInitialGuessNonzero(ksp, la::is_preonly(ksp) ? PETSC_FALSE : PETSC_TRUE));
}

}  // namespace fracmfg::frac
