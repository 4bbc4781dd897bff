#include "fracmfg/mfg/hjb.hpp"

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/la/line_pc.hpp"
#include "fracmfg/la/tridiag_pc.hpp"
#include "fracmfg/la/tridiag_solver.hpp"
#include "mfg/direct_1d.hpp"
#include "mfg/fractional_diffusion.hpp"
#include "mfg/lane_sums.hpp"
#include "mfg/petsc_handles.hpp"
#include "mfg/row_kernels.hpp"
#include "mfg/solver_options.hpp"
#include "mfg/stencil.hpp"

namespace fracmfg::mfg {

void set_default_linear_solver(KSP ksp, int dim, double rtol) {
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  // fracmfg's PC types, so that the options may name them (fracmfg_line in 2D).
  la::register_petsc_types();
  if (dim == 1) {
    // Tridiagonal (cyclic when periodic): the exact distributed tridiagonal solve.
    FRACMFG_PETSC_CHECK(KSPSetType(ksp, KSPPREONLY));
    FRACMFG_PETSC_CHECK(PCSetType(pc, la::tridiag_pc_type));
  } else {
    FRACMFG_PETSC_CHECK(KSPSetType(ksp, KSPGMRES));
    FRACMFG_PETSC_CHECK(PCSetType(pc, PCBJACOBI));
    FRACMFG_PETSC_CHECK(KSPSetTolerances(ksp, rtol, 1e-50, PETSC_DEFAULT, 10000));
    // ILU(3) blocks in 2D: on the crowd game fewer Krylov iterations per HJB solve than
    // ILU(1), and less time per outer iteration than ILU(1) or ILU(2); the further fill of
    // ILU(4) costs more than it saves (3D takes ILU(1): docs/performance.md, "3D games"). The
    // blocks exist only at set-up: the solvers set the level there
    // (detail::default_sub_factor_levels).
  }
}

struct HjbSolver::Impl {
  const Model& model;
  detail::HamiltonianAtDensity ham;
  // The residual and rows (kernel mfg_hjb_rows) where the selector places them.
  detail::RowKernels rk;
  detail::SnesPtr snes;
  detail::MatPtr jac;
  detail::VecPtr r;
  detail::VecPtr local;
  detail::GhostBox gb;
  std::vector<double> rows;
  std::unique_ptr<detail::RowIndices> indices;
  Vec u_next = nullptr;
  Vec rhs = nullptr;
  double atol_now = 0.0;
  int level = -1;  // set_time_level(); the exit cost's time level

  detail::ExitFaces exits() const {
    if (!model.grid().has_exit()) return {};
    if (level < 0)
      throw Error("mfg: HjbSolver::set_time_level() is needed before a step with exits");
    return detail::ExitFaces::of(model, level);
  }
  long long newton = 0;
  long long steps = 0;

  // 1D fast path (mfg/direct_1d.hpp): Newton written into the tridiagonal solver, with the
  // SNES's tolerances.
  bool direct = false;
  bool levels_set = false;  // the default ILU level of block Jacobi is applied
  std::unique_ptr<la::TridiagSolver> tridiag;
  std::unique_ptr<detail::Halo1d> halo;  // 1D: the ghosts without the DMDA scatter
  std::vector<double> r1, sub, diag, super, delta;
  std::vector<double> scratch;  // residual_norm()
  // Diffusion of order s < 2: the nonlocal rest of nu A_s (mfg/fractional_diffusion.hpp).
  std::unique_ptr<detail::FractionalDiffusion> frac;
  PetscReal abstol = 0.0, rtol = 0.0, stol = 0.0;
  PetscInt max_it = 0;

  Impl(const Model& m, exec::Selector* selector) : model(m), ham(m), rk(selector) {}

  [[noreturn]] void fail(const char* where, const std::string& reason, PetscInt its) const {
    throw core::CollectiveError(std::string(where) + ": Newton's method failed for u (" + reason +
                                    " after " + std::to_string(its) + " iterations)",
                                ExitCode::numerical, 0);
  }

  // Newton's method as SNESNEWTONLS with the basic line search and the convergence tests of
  // converged() below, the linear solves by the distributed tridiagonal solver. Returns the
  // iterations. Two synchronisations per iteration: the first residual's norms ride on the
  // first solve's collective (the solve is made before its convergence test and dropped
  // when the start is converged, which the rows computed with that residual make cheap), a
  // later residual's norm and the previous step's norms share one MPI_Allreduce, and the
  // ghosts of the new iterate come from the solve (Halo1d::after_step), not from a message.
  PetscInt direct_step(Vec u, const char* where, double tolerance) {
    const PetscInt n = model.box().count();
    const bool periodic = model.grid().boundary == Boundary::periodic;
    MPI_Comm comm = model.comm();
    double fnorm0 = 0.0;
    const detail::UpwindHamiltonian h = ham.stencil();
    std::pair<double, double> ghosts;
    // Local sums: r^2, then at the start |u_next|^2 and |rhs|^2, later |u|^2 and |delta|^2
    // of the step just taken.
    double mine[3] = {0.0, 0.0, 0.0};
    double total[3] = {0.0, 0.0, 0.0};
    for (PetscInt it = 0;; ++it) {
      bool rows_current = false;  // sub/diag/super belong to the current u
      bool solved = false;        // delta holds the step from the current u
      std::string solve_error;
      {
        detail::ReadArray ul(u);
        detail::ReadArray un(u_next);
        detail::ReadArray b(rhs);
        if (it == 0) {
          ghosts = halo->exchange(ul.get());
          mine[0] =
              detail::hjb_residual_rows_1d(model, h, ul.get(), ghosts, un.get(), b.get(), r1.data(),
                                           sub.data(), diag.data(), super.data(), &rk);
          const double* unp = un.get();
          const double* bp = b.get();
          const auto norms = detail::lane_sums<2>(n, [&](PetscInt k, double* acc) {
            acc[0] += unp[k] * unp[k];
            acc[1] += bp[k] * bp[k];
          });
          mine[1] = norms[0];
          mine[2] = norms[1];
          rows_current = true;
        } else {
          mine[0] = detail::hjb_residual_1d(model, h, ul.get(), ghosts, un.get(), b.get(),
                                            r1.data(), &rk);
        }
      }
      if (it == 0) {
        try {
          tridiag->factor_solve(n, sub.data(), diag.data(), super.data(), periodic, r1.data(),
                                delta.data(), mine, 3, total);
          solved = true;
        } catch (const NumericalError& e) {
          solve_error = e.what();  // the sums arrived; the tests below come first
        }
        atol_now = tolerance * (std::sqrt(total[1]) / model.dt() + std::sqrt(total[2]));
      } else {
        MPI_Allreduce(mine, total, 3, MPI_DOUBLE, MPI_SUM, comm);
      }
      const double fnorm = std::sqrt(total[0]);
      if (!std::isfinite(fnorm)) fail(where, "DIVERGED_FNORM_NAN", it);
      if (it == 0) fnorm0 = fnorm;
      if (fnorm <= atol_now || fnorm < abstol) return it;
      if (it > 0) {
        const double xnorm = std::sqrt(total[1]);
        const double snorm = std::sqrt(total[2]);
        if (fnorm <= rtol * fnorm0 || snorm < stol * xnorm) return it;
      }
      if (it >= max_it) fail(where, "DIVERGED_MAX_IT", it);
      if (!solved && solve_error.empty()) {
        if (!rows_current) {
          detail::ReadArray ul(u);
          detail::ReadArray un(u_next);
          detail::ReadArray b(rhs);
          detail::hjb_residual_rows_1d(model, h, ul.get(), ghosts, un.get(), b.get(), r1.data(),
                                       sub.data(), diag.data(), super.data(), &rk);
        }
        try {
          tridiag->factor_solve(n, sub.data(), diag.data(), super.data(), periodic, r1.data(),
                                delta.data());
        } catch (const NumericalError& e) {
          solve_error = e.what();
        }
      }
      if (!solve_error.empty()) fail(where, "DIVERGED_LINEAR_SOLVE: " + solve_error, it);
      {
        detail::WriteArray x(u);
        double* xs = x.get();
        const double* ds = delta.data();
        const auto norms = detail::lane_sums<2>(n, [&](PetscInt k, double* acc) {
          xs[k] -= ds[k];
          acc[0] += xs[k] * xs[k];
          acc[1] += ds[k] * ds[k];
        });
        mine[1] = norms[0];
        mine[2] = norms[1];
        ghosts = halo->after_step(ghosts, tridiag->neighbour_solution(), xs);
      }
    }
  }

  void to_local(Vec x) {
    FRACMFG_PETSC_CHECK(DMGlobalToLocalBegin(model.dm(), x, INSERT_VALUES, local.get()));
    FRACMFG_PETSC_CHECK(DMGlobalToLocalEnd(model.dm(), x, INSERT_VALUES, local.get()));
  }

  void eval_residual(Vec x, Vec f) {
    eval_local_residual(x, f);
    if (frac) frac->add_nonlocal(x, f);
  }

  void eval_local_residual(Vec x, Vec f) {
    if (halo) {
      detail::ReadArray u(x);
      detail::ReadArray un(u_next);
      detail::ReadArray b(rhs);
      detail::WriteArray out(f);
      detail::hjb_residual_1d(model, ham.stencil(), u.get(), halo->exchange(u.get()), un.get(),
                              b.get(), out.get(), &rk);
      return;
    }
    to_local(x);
    detail::ReadArray u(local.get());
    detail::ReadArray un(u_next);
    detail::ReadArray b(rhs);
    detail::WriteArray out(f);
    detail::hjb_residual(model, ham.stencil(), gb, u.get(), un.get(), b.get(), out.get(), exits(),
                         &rk);
  }

  void assemble(Vec x, Mat p) {
    to_local(x);
    {
      detail::ReadArray u(local.get());
      detail::hjb_rows(model, ham.stencil(), gb, u.get(), rows.data(), exits(), nullptr, &rk);
    }
    // The rows are in the layout of the matrix's COO pattern (RowIndices).
    FRACMFG_PETSC_CHECK(MatSetValuesCOO(p, rows.data(), INSERT_VALUES));
  }

  static PetscErrorCode function(SNES, Vec x, Vec f, void* ctx) {
    FRACMFG_PETSC_CALLBACK_BEGIN
    static_cast<Impl*>(ctx)->eval_residual(x, f);
    FRACMFG_PETSC_CALLBACK_END
  }

  static PetscErrorCode jacobian(SNES s, Vec x, Mat a, Mat p, void* ctx) {
    FRACMFG_PETSC_CALLBACK_BEGIN
    auto* d = static_cast<Impl*>(ctx);
    // With fractional diffusion p is the preconditioning matrix, refreshed from the Jacobian.
    d->assemble(x, d->jac.get());
    if (d->frac) d->frac->mark_changed();
    if (!d->levels_set) {
      // The first assembled Jacobian: the solver's operators, set up once here so that the
      // block solvers exist and take the default ILU level (SNES sets the same operators
      // again; the set-up is not repeated).
      KSP ksp = nullptr;
      FRACMFG_PETSC_CHECK(SNESGetKSP(s, &ksp));
      FRACMFG_PETSC_CHECK(KSPSetOperators(ksp, a, p));
      detail::default_sub_factor_levels(ksp, detail::default_factor_levels(d->model.grid().dim),
                                        &d->levels_set);
    }
    FRACMFG_PETSC_CALLBACK_END
  }

  static PetscErrorCode converged(SNES s, PetscInt it, PetscReal xnorm, PetscReal snorm,
                                  PetscReal fnorm, SNESConvergedReason* reason, void* ctx) {
    // Not PetscCall: inside namespace fracmfg its PetscError() would name our exception.
    const PetscErrorCode ierr = SNESConvergedDefault(s, it, xnorm, snorm, fnorm, reason, nullptr);
    if (ierr != 0) return ierr;
    const auto* d = static_cast<const Impl*>(ctx);
    if (*reason == SNES_CONVERGED_ITERATING && fnorm <= d->atol_now) {
      *reason = SNES_CONVERGED_FNORM_ABS;
    }
    return 0;
  }
};

HjbSolver::HjbSolver(const Model& model, exec::Selector* selector)
    : impl_(std::make_unique<Impl>(model, selector)) {
  Impl& d = *impl_;
  DM dm = model.dm();
  d.gb = detail::ghost_box(dm);
  d.indices = std::make_unique<detail::RowIndices>(model, d.gb);
  d.rows.resize(
      static_cast<std::size_t>(model.box().count() * detail::row_components(model.grid().dim)));
  d.r = detail::global_vec(dm);
  d.local = detail::local_vec(dm);
  // Exits and obstacles: the stencil walk of mfg/stencil.hpp, not the 1D fast path's own.
  const bool plain_1d = model.grid().dim == 1 && !model.grid().has_exit() && !model.has_obstacle();
  if (plain_1d) d.halo = std::make_unique<detail::Halo1d>(model);
  d.jac = d.indices->create_matrix(model.comm());
  Mat j = d.jac.get();
  if (model.diffusion_order() < 2.0) {
    d.frac = std::make_unique<detail::FractionalDiffusion>(model, selector);
    d.frac->bind(j);
  }
  SNES s = nullptr;
  FRACMFG_PETSC_CHECK(SNESCreate(model.comm(), &s));
  d.snes.reset(s);
  FRACMFG_PETSC_CHECK(SNESSetOptionsPrefix(s, "mfg_hjb_"));
  FRACMFG_PETSC_CHECK(SNESSetDM(s, dm));
  FRACMFG_PETSC_CHECK(SNESSetFunction(s, d.r.get(), &Impl::function, &d));
  // With fractional diffusion the Jacobian is matrix-free (the assembled local stencil plus
  // the FFT product); the assembled part is the preconditioning matrix.
  FRACMFG_PETSC_CHECK(SNESSetJacobian(s, d.frac ? d.frac->shell() : j,
                                      d.frac ? d.frac->preconditioning_matrix() : j,
                                      &Impl::jacobian, &d));
  FRACMFG_PETSC_CHECK(SNESSetConvergenceTest(s, &Impl::converged, &d, nullptr));
  FRACMFG_PETSC_CHECK(SNESSetType(s, SNESNEWTONLS));
  SNESLineSearch ls = nullptr;
  FRACMFG_PETSC_CHECK(SNESGetLineSearch(s, &ls));
  FRACMFG_PETSC_CHECK(SNESLineSearchSetType(ls, SNESLINESEARCHBASIC));
  FRACMFG_PETSC_CHECK(SNESSetTolerances(s, 1e-50, 1e-10, 1e-10, 50, 10000));
  FRACMFG_PETSC_CHECK(SNESSetDivergenceTolerance(s, -1.0));
  KSP ksp = nullptr;
  FRACMFG_PETSC_CHECK(SNESGetKSP(s, &ksp));
  FRACMFG_PETSC_CHECK(KSPSetOptionsPrefix(ksp, "mfg_hjb_"));
  // A Newton step needs to cut the residual by about 1e-3 (the outer change over the
  // Newton tolerance, see Solver); 1e-4 leaves a margin and keeps Newton's quadratic pace.
  set_default_linear_solver(ksp, model.grid().dim, 1e-4);
  if (d.frac) {
    detail::set_fractional_linear_solver(ksp, *d.frac, model.grid().dim, 1.0 / model.dt(), 1e-4);
  }
  FRACMFG_PETSC_CHECK(SNESSetFromOptions(s));
  {
    // The SNES passes its DMDA on to the KSP, which a fracmfg_line PC reads.
    PC pc = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
    la::line_pc_set_selector(pc, selector);
  }
  // The 1D fast path (-mfg_hjb_direct, default true) when the solver types are its own.
  if (plain_1d && !d.frac && detail::direct_option(model.comm(), "mfg_hjb_")) {
    PetscBool newton = PETSC_FALSE, basic = PETSC_FALSE;
    FRACMFG_PETSC_CHECK(
        PetscObjectTypeCompare(reinterpret_cast<PetscObject>(s), SNESNEWTONLS, &newton));
    FRACMFG_PETSC_CHECK(
        PetscObjectTypeCompare(reinterpret_cast<PetscObject>(ls), SNESLINESEARCHBASIC, &basic));
    d.direct = newton && basic && detail::is_preonly_tridiag(ksp);
  }
  if (d.direct) {
    PetscInt maxf = 0;
    FRACMFG_PETSC_CHECK(SNESGetTolerances(s, &d.abstol, &d.rtol, &d.stol, &d.max_it, &maxf));
    d.tridiag = std::make_unique<la::TridiagSolver>(model.comm());
    const auto n = static_cast<std::size_t>(model.box().count());
    for (auto* v : {&d.r1, &d.sub, &d.diag, &d.super, &d.delta}) v->assign(n, 0.0);
  }
}

HjbSolver::~HjbSolver() = default;

void HjbSolver::set_density(Vec m) {
  impl_->ham.set_density(m);
}

void HjbSolver::set_time_level(int n) {
  impl_->level = n;
}

int HjbSolver::step(Vec u_next, Vec rhs, Vec u, const char* where, double tolerance) {
  Impl& d = *impl_;
  d.u_next = u_next;
  d.rhs = rhs;
  if (d.direct) {
    const PetscInt its = d.direct_step(u, where, tolerance);
    d.newton += its;
    d.steps += 1;
    return static_cast<int>(its);
  }
  PetscReal nu_next = 0.0, nrhs = 0.0;
  FRACMFG_PETSC_CHECK(VecNorm(u_next, NORM_2, &nu_next));
  FRACMFG_PETSC_CHECK(VecNorm(rhs, NORM_2, &nrhs));
  d.atol_now = tolerance * (nu_next / impl_->model.dt() + nrhs);
  FRACMFG_PETSC_CHECK_SOLVE(SNESSolve(d.snes.get(), nullptr, u));
  SNESConvergedReason reason = SNES_CONVERGED_ITERATING;
  FRACMFG_PETSC_CHECK(SNESGetConvergedReason(d.snes.get(), &reason));
  PetscInt its = 0;
  FRACMFG_PETSC_CHECK(SNESGetIterationNumber(d.snes.get(), &its));
  d.newton += its;
  d.steps += 1;
  if (reason < 0) {
    throw core::CollectiveError(std::string(where) + ": Newton's method failed for u (" +
                                    SNESConvergedReasons[reason] + " after " + std::to_string(its) +
                                    " iterations)",
                                ExitCode::numerical, 0);
  }
  return static_cast<int>(its);
}

double HjbSolver::residual_norm(Vec u_next, Vec rhs, Vec u) {
  Impl& d = *impl_;
  d.u_next = u_next;
  d.rhs = rhs;
  if (!d.halo || d.frac) {
    d.eval_residual(u, d.r.get());
    PetscReal norm = 0.0;
    FRACMFG_PETSC_CHECK(VecNorm(d.r.get(), NORM_2, &norm));
    return norm;
  }
  const auto n = static_cast<std::size_t>(d.model.box().count());
  if (d.scratch.size() != n) d.scratch.assign(n, 0.0);
  double sum = 0.0;
  {
    detail::ReadArray x(u);
    detail::ReadArray un(u_next);
    detail::ReadArray b(rhs);
    sum = detail::hjb_residual_1d(d.model, d.ham.stencil(), x.get(), d.halo->exchange(x.get()),
                                  un.get(), b.get(), d.scratch.data(), &d.rk);
  }
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, d.model.comm());
  return std::sqrt(sum);
}

void HjbSolver::residual(Vec u_next, Vec rhs, Vec u, Vec r) {
  impl_->u_next = u_next;
  impl_->rhs = rhs;
  impl_->eval_residual(u, r);
}

Mat HjbSolver::jacobian(Vec u) {
  impl_->assemble(u, impl_->jac.get());
  return impl_->jac.get();
}

SNES HjbSolver::snes() const {
  return impl_->snes.get();
}
bool HjbSolver::direct() const {
  return impl_->direct;
}
long long HjbSolver::newton_iterations() const {
  return impl_->newton;
}
long long HjbSolver::steps() const {
  return impl_->steps;
}

}  // namespace fracmfg::mfg
