// The space_fractional scheme of frac::FpdeSolver: fractional centred differences for the
// Riesz operator (riesz_operator.hpp, O(h^2)) with the theta scheme in time; each step
// solves (I + theta tau K A) u^n = (I - (1 - theta) tau K A) u^{n-1} + tau (theta f^n +
// (1 - theta) f^{n-1}) by CG on the FFT shell matrix (riesz_shell.hpp), preconditioned by a
// circulant (Strang or T. Chan). A source f(x, y, t, u) is taken implicitly with the same
// weights, theta f(t_n, u^n) + (1 - theta) f(t_{n-1}, u^{n-1}), and each step is solved by
// Newton's method (SNES): the Jacobian I + theta tau K A - theta tau diag(df/du) is a shell
// matrix (the FFT product plus the diagonal), CG preconditioned by the same circulant.
// A variable diffusivity K(x, y) = K profile(x, y) multiplies the Riesz operator row by row,
// u_t = -K(x) (-Laplace)^(s/2) u + f (the form of Pan, Ke, Ng & Sun, SIAM J. Sci. Comput. 36
// (2014) A2698, for diagonal-times-Toeplitz systems): each step's rows are divided by
// profile(x_p), so the matrix diag(1 / profile) + theta tau K A stays symmetric positive
// definite for CG, preconditioned by the circulant scaled with profile^(1/2) on both sides
// (riesz_shell.hpp).
#include <petscsnes.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "frac/fpde_stepper.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/frac/riesz_shell.hpp"
#include "fracmfg/la/petsc_handles.hpp"
#include "fracmfg/la/tridiag_pc.hpp"

// PETSc's option macros (PetscOptionsBegin, PetscCall) call PetscError() unqualified; inside
// namespace fracmfg that would name the exception class, so the options blocks live outside.
namespace {

/// The project's options of this scheme, registered so that -help lists them:
/// -<prefix>time_scheme and -<prefix>circulant (their values are checked by the caller).
/// Returns a PETSc error code (no exceptions inside the options block).
PetscErrorCode read_options(MPI_Comm comm, const char* prefix, char* scheme, size_t scheme_size,
                            char* circulant, size_t circulant_size) {
  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, prefix, "fracmfg fpde options", nullptr);
  PetscCall(PetscOptionsString("-time_scheme",
                               "space_fractional: the time scheme, crank_nicolson (second order) "
                               "or euler (implicit, first order)",
                               "FpdeSolver", "crank_nicolson", scheme, scheme_size, nullptr));
  PetscCall(PetscOptionsString("-circulant",
                               "space_fractional: the circulant preconditioner, strang (G. "
                               "Strang) or tchan (T. Chan)",
                               "FpdeSolver", "strang", circulant, circulant_size, nullptr));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

}  // namespace

namespace fracmfg::frac {

namespace {

using Boundary = FpdeProblem::Boundary;
using Preconditioner = FpdeProblem::Solver::Preconditioner;
using WriteArray = la::VecArray;

class SpaceFractionalStepper final : public FpdeStepper {
 public:
  explicit SpaceFractionalStepper(const FpdeStepContext& context) : FpdeStepper(context) {
    const FpdeProblem& problem = ctx_.problem;
    nonlinear_ = problem.nonlinear();
    const std::size_t np = ctx_.grid.local_size();
    FRACMFG_PETSC_CHECK(VecDuplicate(ctx_.u, rhs_.out()));
    f_now_.resize(np);
    f_prev_.resize(np);
    riesz_ = std::make_unique<RieszShell>(ctx_.grid, problem.order);
    riesz_->op().set_selector(ctx_.options.selector);
    if (problem.diffusivity_profile) set_profile();
    char scheme_text[256] = "crank_nicolson";
    char kind_text[256] = "strang";
    FRACMFG_PETSC_CHECK(read_options(ctx_.comm, ctx_.options.prefix.c_str(), scheme_text,
                                     sizeof scheme_text, kind_text, sizeof kind_text));
    const std::string scheme = scheme_text;
    if (scheme == "crank_nicolson" || scheme == "cn") {
      theta_ = 0.5;
    } else if (scheme == "euler" || scheme == "implicit_euler") {
      theta_ = 1.0;
    } else {
      throw Error("fpde: -" + ctx_.options.prefix + "time_scheme " + scheme +
                  ": expected euler or crank_nicolson");
    }
    const std::string kind = kind_text;
    if (kind == "strang") {
      circulant_ = CirculantKind::strang;
    } else if (kind == "tchan" || kind == "t_chan") {
      circulant_ = CirculantKind::tchan;
    } else {
      throw Error("fpde: -" + ctx_.options.prefix + "circulant " + kind +
                  ": expected strang or tchan");
    }
    FRACMFG_PETSC_CHECK(VecDuplicate(ctx_.u, z_.out()));
    if (ctx_.grid.boundary_kind() == Boundary::dirichlet) {
      const auto& side = ctx_.grid.boundary();
      for (std::size_t p = 0; p < side.size(); ++p) {
        if (side[p] == 0) continue;
        bnd_points_.push_back(p);
        bnd_x_.push_back(ctx_.grid.x()[p]);
        bnd_y_.push_back(ctx_.grid.y()[p]);
      }
      bnd_g_.resize(bnd_points_.size());
    }
    if (!nonlinear_) {
      ksp_ = la::create_ksp(ctx_.comm);
      FRACMFG_PETSC_CHECK(KSPSetOptionsPrefix(ksp_, ctx_.options.prefix.c_str()));
      configure_ksp(ksp_);
      FRACMFG_PETSC_CHECK(KSPSetOperators(ksp_, riesz_->matrix(), riesz_->matrix()));
      FRACMFG_PETSC_CHECK(KSPSetFromOptions(ksp_));
      set_initial_guess(ksp_);
      return;
    }
    fu_.resize(np);
    dfu_.resize(np);
    work_u_.resize(np);
    fixed_rhs_.resize(np);
    PetscInt nlocal = 0;
    PetscInt nglobal = 0;
    FRACMFG_PETSC_CHECK(VecGetLocalSize(ctx_.u, &nlocal));
    FRACMFG_PETSC_CHECK(VecGetSize(ctx_.u, &nglobal));
    FRACMFG_PETSC_CHECK(
        MatCreateShell(ctx_.comm, nlocal, nlocal, nglobal, nglobal, this, jacobian_.out()));
    FRACMFG_PETSC_CHECK(MatShellSetOperation(jacobian_, MATOP_MULT,
                                             reinterpret_cast<void (*)(void)>(&jacobian_mult)));
    FRACMFG_PETSC_CHECK(MatSetOption(jacobian_, MAT_SYMMETRIC, PETSC_TRUE));
    snes_ = la::create_snes(ctx_.comm);
    FRACMFG_PETSC_CHECK(SNESSetOptionsPrefix(snes_, ctx_.options.prefix.c_str()));
    FRACMFG_PETSC_CHECK(SNESSetFunction(snes_, nullptr, &snes_function, this));
    FRACMFG_PETSC_CHECK(SNESSetJacobian(snes_, jacobian_, riesz_->matrix(), &snes_jacobian, this));
    FRACMFG_PETSC_CHECK(SNESSetTolerances(snes_, 1e-50, 1e-10, 1e-14, 50, 10000));
    KSP inner = nullptr;
    FRACMFG_PETSC_CHECK(SNESGetKSP(snes_, &inner));
    configure_ksp(inner);
    FRACMFG_PETSC_CHECK(SNESSetFromOptions(snes_));
  }

  void advance(std::int64_t n) override {
    const std::int64_t m = n + 1;
    const double tau = ctx_.mesh.step(m);
    const double k = ctx_.problem.diffusivity;
    const double kappa = theta_ * tau * k;
    if (kappa != kappa_built_) {
      riesz_->set_coefficients(1.0, kappa);
      if (ksp_) FRACMFG_PETSC_CHECK(KSPSetOperators(ksp_, riesz_->matrix(), riesz_->matrix()));
      kappa_built_ = kappa;
    }
    // z: u^{n} at the unknowns, (1 - theta) g^n + theta g^{n+1} at the boundary points.
    FRACMFG_PETSC_CHECK(VecCopy(ctx_.u, z_));
    const double t_new = ctx_.mesh.time(m);
    if (!bnd_points_.empty()) {
      FpdeGrid::evaluate_at(ctx_.problem.boundary_value, t_new, bnd_points_.size(), bnd_x_.data(),
                            bnd_y_.data(), bnd_g_.data());
      WriteArray za(z_);
      for (std::size_t b = 0; b < bnd_points_.size(); ++b) {
        double& v = za.get()[bnd_points_[b]];
        v = (1.0 - theta_) * v + theta_ * bnd_g_[b];
      }
    }
    // rhs = z - (1 - theta) tau K T z_int - tau K E(z_b), then the sources and the boundary
    // values.
    riesz_->apply(z_, rhs_, 1.0, -(1.0 - theta_) * tau * k, -tau * k);
    if (nonlinear_) {
      // f(t_{n}, u^{n}) again from u (not kept from the last step, so a restart reproduces
      // the uninterrupted run); f(t_{n+1}, u) is the Newton iteration's.
      la::VecReadArray ua(ctx_.u);
      ctx_.grid.evaluate(ctx_.problem.nonlinear_source, ctx_.mesh.time(n), ua.get(),
                         f_prev_.data());
      std::fill(f_now_.begin(), f_now_.end(), 0.0);
    } else {
      if (f_prev_step_ != n) {
        evaluate_source(n, f_prev_);
        f_prev_step_ = n;
      }
      evaluate_source(m, f_now_);
    }
    {
      WriteArray b(rhs_);
      const auto& side = ctx_.grid.boundary();
      for (std::size_t p = 0; p < side.size(); ++p) {
        if (side[p] != 0) continue;
        b.get()[p] += tau * (theta_ * f_now_[p] + (1.0 - theta_) * f_prev_[p]) * inv_w(p);
      }
      for (std::size_t q = 0; q < bnd_points_.size(); ++q) b.get()[bnd_points_[q]] = bnd_g_[q];
    }
    const auto t0 = Clock::now();
    if (!nonlinear_) {
      FRACMFG_PETSC_CHECK_SOLVE(KSPSolve(ksp_, rhs_, ctx_.u));
      ctx_.stats.solve_seconds += seconds_since(t0);
      check_linear_solve(ksp_, rhs_, ctx_.u, m);
      std::swap(f_prev_, f_now_);
      f_prev_step_ = m;
      return;
    }
    solve_nonlinear(m);
    ctx_.stats.solve_seconds += seconds_since(t0);
  }

  KSP ksp() const override {
    if (snes_) {
      KSP inner = nullptr;
      FRACMFG_PETSC_CHECK(SNESGetKSP(snes_, &inner));
      return inner;
    }
    return ksp_;
  }

  /// The state is u alone (the source values are evaluated again).
  void write_state(io::CheckpointWriter& /*checkpoint*/) const override {}

  void read_state(io::CheckpointReader& /*checkpoint*/,
                  const std::function<void(const std::string&)>& /*mismatch*/) override {
    f_prev_step_ = -1;
    kappa_built_ = std::numeric_limits<double>::quiet_NaN();
  }

 private:
  void configure_ksp(KSP k) const {
    FRACMFG_PETSC_CHECK(KSPSetType(k, KSPCG));
    FRACMFG_PETSC_CHECK(KSPSetTolerances(k, 1e-10, 1e-50, PETSC_DEFAULT, 10000));
    PC pc = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetPC(k, &pc));
    if (ctx_.problem.solver.preconditioner == Preconditioner::none) {
      FRACMFG_PETSC_CHECK(PCSetType(pc, PCNONE));
    } else {
      riesz_->set_preconditioner(pc, circulant_);
    }
  }

  /// K(x) = K profile(x): every row of the step is divided by profile(x_p) (RieszShell's
  /// weight), which keeps the matrix symmetric; the sources are divided likewise (inv_w).
  /// The preconditioner's reference is sqrt(min profile max profile) over the unknowns (an
  /// exact reduction, the same at every rank count).
  void set_profile() {
    std::vector<double> w(ctx_.grid.local_size());
    ctx_.grid.evaluate(ctx_.problem.diffusivity_profile, 0.0, w.data());
    const auto& side = ctx_.grid.boundary();
    // min, -max and -(a point that is not a positive number): one exact reduction, so a bad
    // profile is refused on every rank together.
    double range[3] = {std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::infinity(), 0.0};
    for (std::size_t p = 0; p < w.size(); ++p) {
      if (side[p] != 0) continue;
      if (!(w[p] > 0.0 && std::isfinite(w[p]))) range[2] = -1.0;
      range[0] = std::min(range[0], w[p]);
      range[1] = std::min(range[1], -w[p]);
    }
    MPI_Allreduce(MPI_IN_PLACE, range, 3, MPI_DOUBLE, MPI_MIN, ctx_.comm);
    if (range[2] < 0.0) {
      throw Error("fpde: the diffusivity_profile is not a positive number at some grid point");
    }
    inv_w_.resize(w.size());
    for (std::size_t p = 0; p < w.size(); ++p) inv_w_[p] = side[p] != 0 ? 1.0 : 1.0 / w[p];
    riesz_->set_weight(std::move(w), std::sqrt(range[0] * -range[1]));
  }

  /// 1 / profile at owned point p (1 without a profile).
  double inv_w(std::size_t p) const { return inv_w_.empty() ? 1.0 : inv_w_[p]; }

  /// Newton on F(u) = M u - rhs - theta tau mask f(t_m, u) / profile, rhs_ holding everything
  /// else (mask: 1 at the unknowns, 0 at Dirichlet boundary points).
  void solve_nonlinear(std::int64_t m) {
    current_level_ = m;
    current_scale_ = theta_ * ctx_.mesh.step(m);
    {
      la::VecReadArray b(rhs_);
      std::copy(b.get(), b.get() + fixed_rhs_.size(), fixed_rhs_.begin());
    }
    FRACMFG_PETSC_CHECK_SOLVE(SNESSolve(snes_, nullptr, ctx_.u));
    SNESConvergedReason reason;
    FRACMFG_PETSC_CHECK(SNESGetConvergedReason(snes_, &reason));
    PetscInt its = 0;
    PetscInt lits = 0;
    FRACMFG_PETSC_CHECK(SNESGetIterationNumber(snes_, &its));
    FRACMFG_PETSC_CHECK(SNESGetLinearSolveIterations(snes_, &lits));
    ctx_.stats.nonlinear_iterations += its;
    record_linear(lits);
    if (reason < 0) {
      std::ostringstream os;
      os << "fpde: the nonlinear solve of step " << m << " failed (" << SNESConvergedReasons[reason]
         << " after " << its << " Newton iterations)";
      solve_failed(os.str());
    }
  }

  static PetscErrorCode snes_function(SNES, Vec x, Vec f, void* ctx) {
    FRACMFG_PETSC_CALLBACK_BEGIN
    auto* self = static_cast<SpaceFractionalStepper*>(ctx);
    FRACMFG_PETSC_CHECK(MatMult(self->riesz_->matrix(), x, f));
    la::VecReadArray xa(x);
    self->ctx_.grid.evaluate(self->ctx_.problem.nonlinear_source,
                             self->ctx_.mesh.time(self->current_level_), xa.get(),
                             self->fu_.data());
    WriteArray fa(f);
    const auto& side = self->ctx_.grid.boundary();
    for (std::size_t p = 0; p < self->fu_.size(); ++p) {
      const double source = side[p] != 0 ? 0.0 : self->fu_[p] * self->inv_w(p);
      fa.get()[p] -= self->fixed_rhs_[p] + self->current_scale_ * source;
    }
    FRACMFG_PETSC_CALLBACK_END
  }

  /// dfu_ = theta tau df/du at the unknowns (0 at Dirichlet points): from the problem's
  /// derivative, else by forward differences with the step of fpde_problem.hpp.
  static PetscErrorCode snes_jacobian(SNES, Vec x, Mat, Mat, void* ctx) {
    FRACMFG_PETSC_CALLBACK_BEGIN
    auto* self = static_cast<SpaceFractionalStepper*>(ctx);
    const FpdeProblem& problem = self->ctx_.problem;
    const double t = self->ctx_.mesh.time(self->current_level_);
    const std::size_t np = self->fu_.size();
    la::VecReadArray xa(x);
    if (problem.nonlinear_source_derivative) {
      self->ctx_.grid.evaluate(problem.nonlinear_source_derivative, t, xa.get(), self->dfu_.data());
    } else {
      self->ctx_.grid.evaluate(problem.nonlinear_source, t, xa.get(), self->fu_.data());
      for (std::size_t p = 0; p < np; ++p) {
        const double h = 1.4901161193847656e-08 * std::max(1.0, std::fabs(xa.get()[p]));
        self->work_u_[p] = xa.get()[p] + h;
      }
      self->ctx_.grid.evaluate(problem.nonlinear_source, t, self->work_u_.data(),
                               self->dfu_.data());
      for (std::size_t p = 0; p < np; ++p) {
        self->dfu_[p] = (self->dfu_[p] - self->fu_[p]) / (self->work_u_[p] - xa.get()[p]);
      }
    }
    const auto& side = self->ctx_.grid.boundary();
    for (std::size_t p = 0; p < np; ++p) {
      self->dfu_[p] = side[p] != 0 ? 0.0 : self->current_scale_ * self->dfu_[p] * self->inv_w(p);
    }
    FRACMFG_PETSC_CALLBACK_END
  }

  /// y = M x - dfu_ x.
  static PetscErrorCode jacobian_mult(Mat j, Vec x, Vec y) {
    FRACMFG_PETSC_CALLBACK_BEGIN
    void* ctx = nullptr;
    FRACMFG_PETSC_CHECK(MatShellGetContext(j, &ctx));
    auto* self = static_cast<SpaceFractionalStepper*>(ctx);
    FRACMFG_PETSC_CHECK(MatMult(self->riesz_->matrix(), x, y));
    la::VecReadArray xa(x);
    WriteArray ya(y);
    for (std::size_t p = 0; p < self->dfu_.size(); ++p) ya.get()[p] -= self->dfu_[p] * xa.get()[p];
    FRACMFG_PETSC_CALLBACK_END
  }

  bool nonlinear_ = false;  ///< the source depends on u
  la::SnesHandle snes_;
  la::MatHandle jacobian_;  ///< MATSHELL: the Riesz matrix minus diag(dfu_)
  std::vector<double> fu_, dfu_, work_u_, fixed_rhs_;
  std::int64_t current_level_ = 0;  ///< the level the SNES callbacks solve for
  double current_scale_ = 0.0;      ///< theta tau of that step

  std::unique_ptr<RieszShell> riesz_;
  std::vector<double> inv_w_;  ///< 1 / diffusivity_profile at the owned points (empty: none)
  double theta_ = 0.5;
  CirculantKind circulant_ = CirculantKind::strang;
  double kappa_built_ = std::numeric_limits<double>::quiet_NaN();
  la::VecHandle rhs_, z_;
  la::KspHandle ksp_;
  std::vector<double> f_now_, f_prev_;   ///< source values at the owned points
  std::int64_t f_prev_step_ = -1;        ///< the level f_prev_ belongs to
  std::vector<std::size_t> bnd_points_;  ///< owned Dirichlet boundary points
  std::vector<double> bnd_x_, bnd_y_, bnd_g_;
};

}  // namespace

std::unique_ptr<FpdeStepper> make_space_fractional_stepper(const FpdeStepContext& context) {
  return std::make_unique<SpaceFractionalStepper>(context);
}

}  // namespace fracmfg::frac
