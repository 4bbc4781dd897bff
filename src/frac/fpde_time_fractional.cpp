// The time_fractional scheme of frac::FpdeSolver: the L1 scheme (fpde_history.hpp) with
// second-order central differences in space; each step solves
// (c_n W + W (-K Laplace_h)) u^n = W (f^n + c_n u^{n-1} - h^n) + boundary terms with a KSP,
// or by Newton's method (SNES) for a source that depends on u. W are the boundary weights
// (fpde_solver.hpp).
#include <petscdmda.h>
#include <petscsnes.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "frac/fpde_stepper.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/exec/cpu_share.hpp"
#include "fracmfg/la/petsc_handles.hpp"
#include "fracmfg/la/tridiag_pc.hpp"

// PETSc's option macros (PetscOptionsBegin, PetscCall) call PetscError() unqualified; inside
// namespace fracmfg that would name the exception class, so the options blocks live outside.
namespace {

/// The project's options of this scheme, registered so that -help lists them:
/// -<prefix>pc_lag_ratio, and -<prefix>ksp_type, whose presence keeps a PREONLY the user
/// asked for (keep_preonly_exact). Returns a PETSc error code (no exceptions inside the
/// options block).
PetscErrorCode read_options(MPI_Comm comm, const char* prefix, const char* default_ksp,
                            PetscReal* lag_ratio, PetscBool* ksp_type_given) {
  char type[256] = "";
  PetscFunctionBeginUser;
  PetscCall(KSPInitializePackage());  // KSPList, for the -ksp_type choices
  PetscOptionsBegin(comm, prefix, "fracmfg fpde options", nullptr);
  PetscCall(PetscOptionsReal("-pc_lag_ratio",
                             "time_fractional with a Krylov method: build the preconditioner "
                             "again when c_n has moved by this factor from the value it was "
                             "built for (1: every step)",
                             "FpdeSolver", *lag_ratio, lag_ratio, nullptr));
  PetscCall(PetscOptionsFList("-ksp_type",
                              "time_fractional: the Krylov method; when not given, PREONLY is "
                              "kept with an exact preconditioner only (else CG)",
                              "KSPSetType", KSPList, default_ksp, type, sizeof type,
                              ksp_type_given));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

}  // namespace

namespace fracmfg::frac {

namespace {

using Boundary = FpdeProblem::Boundary;
using Preconditioner = FpdeProblem::Solver::Preconditioner;
using ReadArray = la::VecReadArray;
using WriteArray = la::VecArray;

/// An interior point next to a Dirichlet boundary point: the boundary value there enters the
/// right-hand side with `coefficient` (K / h_d^2).
struct DirichletNeighbour {
  std::size_t point = 0;  ///< owned point receiving the term
  double coefficient = 0.0;
};

class TimeFractionalStepper final : public FpdeStepper {
 public:
  explicit TimeFractionalStepper(const FpdeStepContext& context) : FpdeStepper(context) {
    const FpdeProblem& problem = ctx_.problem;
    if (problem.solver.preconditioner == Preconditioner::circulant) {
      throw Error(
          "fpde: solver.preconditioner circulant applies to type space_fractional; use auto "
          "or none for time_fractional");
    }
    nonlinear_ = problem.nonlinear();
    const std::size_t np = ctx_.grid.local_size();
    FRACMFG_PETSC_CHECK(VecDuplicate(ctx_.u, u_prev_.out()));
    FRACMFG_PETSC_CHECK(VecDuplicate(ctx_.u, rhs_.out()));
    f_now_.resize(np);
    const auto method = problem.history.method == FpdeProblem::History::Method::soe
                            ? L1History::Method::soe
                            : L1History::Method::direct;
    history_.emplace(method, problem.order, ctx_.mesh, np, problem.history.tolerance);
    history_->set_selector(ctx_.options.selector);
    const bool exact_1d =
        ctx_.grid.dimension() == 1 && problem.solver.preconditioner != Preconditioner::none;
    PetscReal ratio = lag_ratio_;
    PetscBool ksp_type_given = PETSC_FALSE;
    FRACMFG_PETSC_CHECK(read_options(ctx_.comm, ctx_.options.prefix.c_str(),
                                     exact_1d ? KSPPREONLY : KSPCG, &ratio, &ksp_type_given));
    lag_ratio_ = ratio;
    ksp_type_given_ = ksp_type_given == PETSC_TRUE;
    classify_points();
    assemble_laplacian();
    FRACMFG_PETSC_CHECK(MatDuplicate(lap_, MAT_COPY_VALUES, a_.out()));
    FRACMFG_PETSC_CHECK(VecDuplicate(ctx_.u, cw_.out()));
    du_.resize(np);
    lin_rhs_.resize(np);
    if (nonlinear_) {
      fu_.resize(np);
      fu_shift_.resize(np);
      work_u_.resize(np);
      FRACMFG_PETSC_CHECK(MatDuplicate(lap_, MAT_COPY_VALUES, jac_.out()));
      snes_ = la::create_snes(ctx_.comm);
      FRACMFG_PETSC_CHECK(SNESSetOptionsPrefix(snes_, ctx_.options.prefix.c_str()));
      FRACMFG_PETSC_CHECK(SNESSetFunction(snes_, nullptr, &snes_function, this));
      FRACMFG_PETSC_CHECK(SNESSetJacobian(snes_, jac_, jac_, &snes_jacobian, this));
      FRACMFG_PETSC_CHECK(SNESSetTolerances(snes_, 1e-50, 1e-10, 1e-14, 50, 10000));
      KSP inner = nullptr;
      FRACMFG_PETSC_CHECK(SNESGetKSP(snes_, &inner));
      configure_ksp(inner);
      FRACMFG_PETSC_CHECK(SNESSetFromOptions(snes_));
    } else {
      FRACMFG_PETSC_CHECK(MatDuplicate(lap_, MAT_COPY_VALUES, pmat_.out()));
      create_ksp();
      // An iterative method may keep a preconditioner built for a nearby c (graded meshes
      // change c every step); a direct solve (PREONLY) needs the exact matrix.
      KSPType type = nullptr;
      FRACMFG_PETSC_CHECK(KSPGetType(ksp_, &type));
      lag_ = std::string(type) != KSPPREONLY;
      if (!(lag_ratio_ > 1.0)) lag_ = false;
    }
  }

  void advance(std::int64_t n) override {
    const std::int64_t m = n + 1;
    const double c = history_->diagonal(m);
    build_operator(c);
    FRACMFG_PETSC_CHECK(VecCopy(ctx_.u, u_prev_));
    {
      ReadArray up(u_prev_);
      rhs_without_source(m, c, up.get());
    }
    const auto t0 = Clock::now();
    const double cpu0 = exec::thread_cpu_seconds();
    if (!nonlinear_) {
      evaluate_source(m, f_now_);
      {
        WriteArray b(rhs_);
        for (std::size_t p = 0; p < lin_rhs_.size(); ++p) {
          b.get()[p] = lin_rhs_[p] + weight_[p] * f_now_[p];
        }
      }
      FRACMFG_PETSC_CHECK_SOLVE(KSPSolve(ksp_, rhs_, ctx_.u));
      check_linear_solve(ksp_, rhs_, ctx_.u, m);
    } else {
      current_level_ = m;
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
        os << "fpde: the nonlinear solve of step " << m << " failed ("
           << SNESConvergedReasons[reason] << " after " << its << " Newton iterations)";
        solve_failed(os.str());
      }
    }
    ctx_.stats.solve_seconds += seconds_since(t0);
    ctx_.stats.solve_cpu_seconds += exec::thread_cpu_seconds() - cpu0;
    const auto t1 = Clock::now();
    {
      ReadArray un(ctx_.u);
      ReadArray up(u_prev_);
      for (std::size_t p = 0; p < du_.size(); ++p) du_[p] = un.get()[p] - up.get()[p];
    }
    history_->push(du_.data());
    ctx_.stats.history_seconds += seconds_since(t1);
  }

  void write_state(io::CheckpointWriter& ck) const override {
    ck.add_scalar_string("history_method", io::to_string(ctx_.problem.history.method));
    ck.add_scalar_int64("history_levels", history_->levels());
    ck.add_scalar_double("pc_coefficient", c_pc_);
    const FpdeStepperState state = export_state(FpdeStepperState::Layout::point_major);
    la::DmHandle companion = ctx_.grid.create_companion(static_cast<PetscInt>(state.dof));
    la::VecHandle vec;
    FRACMFG_PETSC_CHECK(DMCreateGlobalVector(companion, vec.out()));
    {
      WriteArray s(vec);
      std::copy(state.values.begin(), state.values.end(), s.get());
    }
    ck.add_field("history", companion, vec);
  }

  void read_state(io::CheckpointReader& rk,
                  const std::function<void(const std::string&)>& mismatch) override {
    if (rk.scalar_string("history_method") != io::to_string(ctx_.problem.history.method)) {
      mismatch("history method");
    }
    FpdeStepperState state;
    state.levels = rk.scalar_int64("history_levels");
    const io::FieldShape hs = rk.field_shape("history");
    la::DmHandle companion = ctx_.grid.create_companion(hs.dof);
    la::VecHandle vec;
    FRACMFG_PETSC_CHECK(DMCreateGlobalVector(companion, vec.out()));
    rk.read_field("history", companion, vec);
    state.dof = static_cast<std::size_t>(hs.dof);
    {
      ReadArray s(vec);
      state.values.assign(s.get(), s.get() + state.dof * ctx_.grid.local_size());
    }
    // The preconditioner of the uninterrupted run at this step was built for c_pc.
    state.global = {rk.scalar_double("pc_coefficient")};
    import_state(state);
  }

  /// The L1 history (its state vectors at each point) and the coefficient the lagged
  /// preconditioner was built for.
  FpdeStepperState export_state(FpdeStepperState::Layout layout) const override {
    FpdeStepperState state;
    state.dof = history_->state_size();
    state.layout = layout;
    state.levels = history_->levels();
    const std::size_t points = ctx_.grid.local_size();
    state.values.resize(state.dof * points);
    const bool by_vector = layout == FpdeStepperState::Layout::vector_major;
    for (std::size_t k = 0; k < state.dof; ++k) {
      if (by_vector) {
        history_->save_state(k, state.values.data() + k * points, 1);
      } else {
        history_->save_state(k, state.values.data() + k, state.dof);
      }
    }
    state.global = {c_pc_};
    return state;
  }

  void import_state(const FpdeStepperState& state) override {
    if (state.layout == FpdeStepperState::Layout::vector_major) {
      history_->load_state(state.levels, state.dof, state.values.data(), 1, ctx_.grid.local_size());
    } else {
      history_->load_state(state.levels, state.dof, state.values.data(), state.dof, 1);
    }
    c_built_ = std::numeric_limits<double>::quiet_NaN();
    if (!nonlinear_ && !state.global.empty() && !std::isnan(state.global[0])) {
      build_preconditioner(state.global[0]);
    }
  }

  KSP ksp() const override {
    if (snes_) {
      KSP inner = nullptr;
      FRACMFG_PETSC_CHECK(SNESGetKSP(snes_, &inner));
      return inner;
    }
    return ksp_;
  }

  const L1History* history() const override { return &*history_; }

  bool times_solve_cpu() const override { return true; }

 private:
  bool is_dirichlet() const { return ctx_.grid.boundary_kind() == Boundary::dirichlet; }
  bool is_neumann() const { return ctx_.grid.boundary_kind() == Boundary::neumann; }

  /// A new KSP from the defaults and the options database. Each preconditioner setup
  /// happens on a fresh object, so it depends only on its matrix (GAMG keeps data between
  /// setups of one object, which would make a restarted run differ from an uninterrupted
  /// one).
  void create_ksp() {
    ksp_ = la::create_ksp(ctx_.comm);
    FRACMFG_PETSC_CHECK(KSPSetOptionsPrefix(ksp_, ctx_.options.prefix.c_str()));
    configure_ksp(ksp_);
    FRACMFG_PETSC_CHECK(KSPSetFromOptions(ksp_));
    keep_preonly_exact(ksp_);
    set_initial_guess(ksp_);
  }

  /// PREONLY is the 1D default because the tridiagonal PC is exact; when the options choose
  /// another PC but no KSP, CG takes over (PREONLY with, say, Jacobi would be wrong).
  void keep_preonly_exact(KSP k) const {
    KSPType ktype = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetType(k, &ktype));
    if (ktype == nullptr || std::string(ktype) != KSPPREONLY) return;
    if (ksp_type_given_) return;
    PC pc = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetPC(k, &pc));
    PCType ptype = nullptr;
    FRACMFG_PETSC_CHECK(PCGetType(pc, &ptype));
    const std::string p = ptype ? ptype : "";
    const bool exact =
        p == la::tridiag_pc_type || p == PCLU || p == PCCHOLESKY || p == PCREDUNDANT || p == PCSVD;
    if (exact) return;
    FRACMFG_PETSC_CHECK(KSPSetType(k, KSPCG));
    // PETSc reads no tolerance or monitor options for a PREONLY KSP: read them again for
    // CG, or the user's -<prefix>ksp_rtol and -<prefix>ksp_max_it would be dropped.
    FRACMFG_PETSC_CHECK(KSPSetFromOptions(k));
  }

  void configure_ksp(KSP k) const {
    PC pc = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetPC(k, &pc));
    FRACMFG_PETSC_CHECK(KSPSetTolerances(k, 1e-10, 1e-50, PETSC_DEFAULT, 10000));
    if (ctx_.problem.solver.preconditioner == Preconditioner::none) {
      FRACMFG_PETSC_CHECK(KSPSetType(k, KSPCG));
      FRACMFG_PETSC_CHECK(PCSetType(pc, PCNONE));
    } else if (ctx_.grid.dimension() == 1) {
      FRACMFG_PETSC_CHECK(KSPSetType(k, KSPPREONLY));
      FRACMFG_PETSC_CHECK(PCSetType(pc, la::tridiag_pc_type));
    } else {
      // BoomerAMG: its setup is deterministic on any rank count, so restarts reproduce the
      // uninterrupted run bit for bit; GAMG (-fpde_pc_type gamg, the fallback without hypre)
      // sums parallel Galerkin products in message-arrival order.
      PetscBool hypre = PETSC_FALSE;
      FRACMFG_PETSC_CHECK(PetscHasExternalPackage("hypre", &hypre));
      FRACMFG_PETSC_CHECK(KSPSetType(k, KSPCG));
      FRACMFG_PETSC_CHECK(PCSetType(pc, hypre ? PCHYPRE : PCGAMG));
    }
  }

  /// Weights, Neumann flux coefficients, boundary point and Dirichlet neighbour lists.
  void classify_points() {
    const std::size_t np = ctx_.grid.local_size();
    const int dim = ctx_.grid.dimension();
    const double k = ctx_.problem.diffusivity;
    weight_.assign(np, 1.0);
    flux_coeff_.assign(np, 0.0);
    dirichlet_diag_ = 0.0;
    for (int d = 0; d < dim; ++d)
      dirichlet_diag_ += 2.0 * k / (ctx_.grid.spacing(d) * ctx_.grid.spacing(d));
    const auto& side = ctx_.grid.boundary();
    for (std::size_t p = 0; p < np; ++p) {
      if (side[p] == 0) continue;
      bnd_points_.push_back(p);
      bnd_x_.push_back(ctx_.grid.x()[p]);
      bnd_y_.push_back(ctx_.grid.y()[p]);
      if (is_dirichlet()) {
        weight_[p] = 0.0;
        continue;
      }
      // Neumann: weight 1/2 per face the point lies on; the ghost-point flux term.
      double w = 1.0;
      double faces = 0.0;
      for (int d = 0; d < dim; ++d) {
        const unsigned bits =
            d == 0 ? (FpdeGrid::x_low | FpdeGrid::x_high) : (FpdeGrid::y_low | FpdeGrid::y_high);
        if (side[p] & bits) {
          w *= 0.5;
          faces += 2.0 / ctx_.grid.spacing(d);
        }
      }
      weight_[p] = w;
      flux_coeff_[p] = -w * faces;
    }
    bnd_g_.resize(bnd_points_.size());
    if (!is_dirichlet()) return;
    // Interior points next to a Dirichlet point get K / h^2 g(neighbour) on the right.
    const PetscInt nx = ctx_.grid.points(0);
    const PetscInt ny = ctx_.grid.points(1);
    std::size_t p = 0;
    for (PetscInt j = ctx_.grid.begin(1); j < ctx_.grid.begin(1) + ctx_.grid.count(1); ++j) {
      for (PetscInt i = ctx_.grid.begin(0); i < ctx_.grid.begin(0) + ctx_.grid.count(0); ++i, ++p) {
        if (side[p] != 0) continue;
        auto add = [&](PetscInt ii, PetscInt jj, double h) {
          const double mid_x = 0.5 * static_cast<double>(i + ii) * ctx_.grid.spacing(0);
          const double mid_y =
              dim == 2 ? 0.5 * static_cast<double>(j + jj) * ctx_.grid.spacing(1) : 0.0;
          nbrs_.push_back({p, conductance(k, h, mid_x, mid_y)});
          nbr_x_.push_back(static_cast<double>(ii) * ctx_.grid.spacing(0));
          nbr_y_.push_back(dim == 2 ? static_cast<double>(jj) * ctx_.grid.spacing(1) : 0.0);
        };
        if (i == 1) add(0, j, ctx_.grid.spacing(0));
        if (i == nx - 2) add(nx - 1, j, ctx_.grid.spacing(0));
        if (dim == 2 && j == 1) add(i, 0, ctx_.grid.spacing(1));
        if (dim == 2 && j == ny - 2) add(i, ny - 1, ctx_.grid.spacing(1));
      }
    }
    nbr_g_.resize(nbrs_.size());
  }

  /// K(x, y) / h^2 at a half point: diffusivity * profile, or diffusivity / h^2 exactly as
  /// for a constant K when there is no profile.
  double conductance(double k, double h, double x, double y) const {
    if (!ctx_.problem.diffusivity_profile) return k / (h * h);
    return k * ctx_.problem.diffusivity_profile(x, y, 0.0) / (h * h);
  }

  /// lap_ = W (-K Laplace_h) (Neumann ghost points folded in, Dirichlet neighbours dropped)
  /// and D on the Dirichlet rows. Symmetric.
  void assemble_laplacian() {
    FRACMFG_PETSC_CHECK(DMCreateMatrix(ctx_.grid.dm(), lap_.out()));
    FRACMFG_PETSC_CHECK(MatSetOption(lap_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    const int dim = ctx_.grid.dimension();
    const double k = ctx_.problem.diffusivity;
    const bool variable = static_cast<bool>(ctx_.problem.diffusivity_profile);
    const bool per = ctx_.grid.periodic();
    const auto& side = ctx_.grid.boundary();
    const PetscInt nn[2] = {ctx_.grid.points(0), ctx_.grid.points(1)};
    std::size_t p = 0;
    for (PetscInt j = ctx_.grid.begin(1); j < ctx_.grid.begin(1) + ctx_.grid.count(1); ++j) {
      for (PetscInt i = ctx_.grid.begin(0); i < ctx_.grid.begin(0) + ctx_.grid.count(0); ++i, ++p) {
        MatStencil row{};
        row.i = i;
        row.j = j;
        MatStencil cols[5];
        double vals[5];
        int nc = 0;
        if (is_dirichlet() && side[p] != 0) {
          cols[0] = row;
          vals[0] = dirichlet_diag_;
          FRACMFG_PETSC_CHECK(MatSetValuesStencil(lap_, 1, &row, 1, cols, vals, INSERT_VALUES));
          continue;
        }
        const double w = weight_[p];
        double diag = 0.0;
        for (int d = 0; d < dim; ++d) {
          const double h = ctx_.grid.spacing(d);
          const double c = k / (h * h);
          const PetscInt idx = d == 0 ? i : j;
          const bool low = !per && idx == 0;
          const bool high = !per && idx == nn[d] - 1;
          // K at the half points idx -+ 1/2 (variable K); at a Neumann side the ghost point
          // mirrors the inner one, and so does K.
          double c_side[2] = {c, c};
          if (variable) {
            for (int s = 0; s < 2; ++s) {
              int dir = s == 0 ? -1 : 1;
              if (low) dir = 1;
              if (high) dir = -1;
              // Periodic: the half point before the first point is the one after the last.
              double mid = static_cast<double>(idx) + 0.5 * dir;
              if (mid < 0.0) mid += static_cast<double>(nn[d]);
              const double xi = d == 0 ? mid : static_cast<double>(i);
              const double yj = d == 1 ? mid : static_cast<double>(j);
              c_side[s] = conductance(k, h, xi * ctx_.grid.spacing(0),
                                      dim == 2 ? yj * ctx_.grid.spacing(1) : 0.0);
            }
            diag += w * (c_side[0] + c_side[1]);
          } else {
            diag += 2.0 * w * c;
          }
          for (int dir : {-1, 1}) {
            const PetscInt other = idx + dir;
            if ((dir < 0 && low) || (dir > 0 && high)) continue;  // ghost point, folded in
            const double cd = c_side[dir < 0 ? 0 : 1];
            double coeff = -w * cd;
            if (is_neumann() && (low || high)) coeff = -2.0 * w * cd;
            if (is_dirichlet() && !per && (other == 0 || other == nn[d] - 1)) continue;
            MatStencil col = row;
            if (d == 0)
              col.i = other;
            else
              col.j = other;
            cols[nc] = col;
            vals[nc] = coeff;
            ++nc;
          }
        }
        cols[nc] = row;
        vals[nc] = diag;
        ++nc;
        FRACMFG_PETSC_CHECK(MatSetValuesStencil(lap_, 1, &row, nc, cols, vals, INSERT_VALUES));
      }
    }
    FRACMFG_PETSC_CHECK(MatAssemblyBegin(lap_, MAT_FINAL_ASSEMBLY));
    FRACMFG_PETSC_CHECK(MatAssemblyEnd(lap_, MAT_FINAL_ASSEMBLY));
    FRACMFG_PETSC_CHECK(MatSetOption(lap_, MAT_SYMMETRIC, PETSC_TRUE));
  }

  /// a = c W + lap_, rebuilt only when c changes (every step on a graded mesh, once on a
  /// uniform one); the preconditioner's matrix is rebuilt (with a new KSP) when c has moved
  /// by more than lag_ratio_ from the c it was built for, or at every change without lag_.
  void build_operator(double c) {
    if (c != c_built_) {
      set_matrix(a_, c);
      c_built_ = c;
    }
    if (nonlinear_) return;
    const bool fresh = std::isnan(c_pc_);
    const bool rebuild =
        fresh || (lag_ ? (c > lag_ratio_ * c_pc_ || c * lag_ratio_ < c_pc_) : c != c_pc_);
    if (rebuild) build_preconditioner(c);
    FRACMFG_PETSC_CHECK(KSPSetOperators(ksp_, a_, pmat_));
  }

  void set_matrix(Mat m, double c) {
    FRACMFG_PETSC_CHECK(MatCopy(lap_, m, SAME_NONZERO_PATTERN));
    {
      WriteArray w(cw_);
      for (std::size_t p = 0; p < weight_.size(); ++p) w.get()[p] = c * weight_[p];
    }
    FRACMFG_PETSC_CHECK(MatDiagonalSet(m, cw_, ADD_VALUES));
    FRACMFG_PETSC_CHECK(MatSetOption(m, MAT_SYMMETRIC, PETSC_TRUE));
  }

  void build_preconditioner(double c) {
    if (!std::isnan(c_pc_)) create_ksp();
    set_matrix(pmat_, c);
    c_pc_ = c;
  }

  /// The right-hand side without the source term at level m (= n + 1): boundary rows,
  /// W (c u^{n} - h), Dirichlet neighbours and Neumann fluxes.
  void rhs_without_source(std::int64_t m, double c, const double* uprev) {
    const double t = ctx_.mesh.time(m);
    const std::vector<double>& h = history_->history();
    const std::size_t np = ctx_.grid.local_size();
    for (std::size_t p = 0; p < np; ++p) lin_rhs_[p] = weight_[p] * (c * uprev[p] - h[p]);
    if (!bnd_points_.empty()) {
      FpdeGrid::evaluate_at(ctx_.problem.boundary_value, t, bnd_points_.size(), bnd_x_.data(),
                            bnd_y_.data(), bnd_g_.data());
      for (std::size_t b = 0; b < bnd_points_.size(); ++b) {
        const std::size_t p = bnd_points_[b];
        if (is_dirichlet()) {
          lin_rhs_[p] = dirichlet_diag_ * bnd_g_[b];
        } else {
          lin_rhs_[p] += flux_coeff_[p] * bnd_g_[b];
        }
      }
    }
    if (!nbrs_.empty()) {
      FpdeGrid::evaluate_at(ctx_.problem.boundary_value, t, nbrs_.size(), nbr_x_.data(),
                            nbr_y_.data(), nbr_g_.data());
      for (std::size_t q = 0; q < nbrs_.size(); ++q) {
        lin_rhs_[nbrs_[q].point] += nbrs_[q].coefficient * nbr_g_[q];
      }
    }
  }

  // --- nonlinear source: F(u) = a u - lin_rhs - W f(t, x, u) ------------------------------

  static PetscErrorCode snes_function(SNES, Vec x, Vec f, void* ctx) {
    FRACMFG_PETSC_CALLBACK_BEGIN
    auto* self = static_cast<TimeFractionalStepper*>(ctx);
    FRACMFG_PETSC_CHECK(MatMult(self->a_, x, f));
    ReadArray xa(x);
    self->ctx_.grid.evaluate(self->ctx_.problem.nonlinear_source,
                             self->ctx_.mesh.time(self->current_level_), xa.get(),
                             self->fu_.data());
    WriteArray fa(f);
    for (std::size_t p = 0; p < self->fu_.size(); ++p) {
      fa.get()[p] -= self->lin_rhs_[p] + self->weight_[p] * self->fu_[p];
    }
    FRACMFG_PETSC_CALLBACK_END
  }

  /// J = a - W diag(df/du): the derivative from the problem when it has one, else forward
  /// differences with the step of fpde_problem.hpp.
  static PetscErrorCode snes_jacobian(SNES, Vec x, Mat j, Mat, void* ctx) {
    FRACMFG_PETSC_CALLBACK_BEGIN
    auto* self = static_cast<TimeFractionalStepper*>(ctx);
    const FpdeProblem& problem = self->ctx_.problem;
    const double t = self->ctx_.mesh.time(self->current_level_);
    {
      ReadArray xa(x);
      const std::size_t np = self->fu_.size();
      WriteArray w(self->cw_);
      if (problem.nonlinear_source_derivative) {
        self->ctx_.grid.evaluate(problem.nonlinear_source_derivative, t, xa.get(),
                                 self->fu_.data());
        for (std::size_t p = 0; p < np; ++p) w.get()[p] = -self->weight_[p] * self->fu_[p];
      } else {
        self->ctx_.grid.evaluate(problem.nonlinear_source, t, xa.get(), self->fu_.data());
        for (std::size_t p = 0; p < np; ++p) {
          const double h = 1.4901161193847656e-08 * std::max(1.0, std::fabs(xa.get()[p]));
          self->work_u_[p] = xa.get()[p] + h;
        }
        self->ctx_.grid.evaluate(problem.nonlinear_source, t, self->work_u_.data(),
                                 self->fu_shift_.data());
        for (std::size_t p = 0; p < np; ++p) {
          const double h = self->work_u_[p] - xa.get()[p];
          w.get()[p] = -self->weight_[p] * (self->fu_shift_[p] - self->fu_[p]) / h;
        }
      }
    }
    FRACMFG_PETSC_CHECK(MatCopy(self->a_, j, SAME_NONZERO_PATTERN));
    FRACMFG_PETSC_CHECK(MatDiagonalSet(j, self->cw_, ADD_VALUES));
    FRACMFG_PETSC_CALLBACK_END
  }

  bool nonlinear_ = false;       ///< the source depends on u
  bool ksp_type_given_ = false;  ///< -<prefix>ksp_type is in the options database
  std::optional<L1History> history_;
  la::VecHandle u_prev_, rhs_;
  la::KspHandle ksp_;
  la::SnesHandle snes_;
  std::vector<double> f_now_;            ///< source values at the owned points
  la::MatHandle lap_;                    ///< W (-K Laplace_h) with the Dirichlet rows D
  la::MatHandle a_;                      ///< c W + lap
  la::MatHandle jac_;                    ///< Jacobian for a nonlinear source
  la::VecHandle cw_;                     ///< W (0 on Dirichlet rows), scaled by c when building a
  std::vector<double> weight_;           ///< W per owned point (0: Dirichlet boundary point)
  std::vector<double> flux_coeff_;       ///< Neumann: -W sum_faces 2 / h_d per owned point
  double dirichlet_diag_ = 1.0;          ///< D, the diagonal of the Dirichlet rows
  std::vector<std::size_t> bnd_points_;  ///< owned boundary points (Dirichlet or Neumann)
  std::vector<double> bnd_x_, bnd_y_, bnd_g_;
  std::vector<DirichletNeighbour> nbrs_;  ///< terms from Dirichlet neighbours
  std::vector<double> nbr_x_, nbr_y_, nbr_g_;
  double c_built_ = std::numeric_limits<double>::quiet_NaN();
  la::MatHandle pmat_;  ///< c_pc W + lap: the matrix the preconditioner is built from
  double c_pc_ = std::numeric_limits<double>::quiet_NaN();
  bool lag_ = false;        ///< the preconditioner may lag behind a changing c
  double lag_ratio_ = 2.0;  ///< rebuild when c / c_pc leaves [1/ratio, ratio]
  std::vector<double> du_, lin_rhs_, fu_, fu_shift_, work_u_;
  std::int64_t current_level_ = 0;  ///< the level the SNES callbacks solve for
};

}  // namespace

std::unique_ptr<FpdeStepper> make_time_fractional_stepper(const FpdeStepContext& context) {
  return std::make_unique<TimeFractionalStepper>(context);
}

}  // namespace fracmfg::frac
