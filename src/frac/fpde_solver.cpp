#include "fracmfg/frac/fpde_solver.hpp"

#include <petscdmda.h>
#include <petscsnes.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/core/progress.hpp"
#include "fracmfg/frac/riesz_shell.hpp"
#include "fracmfg/io/checkpoint.hpp"
#include "fracmfg/la/petsc_handles.hpp"
#include "fracmfg/la/tridiag_pc.hpp"

namespace fracmfg::frac {

namespace {

using Clock = std::chrono::steady_clock;
using Boundary = io::FpdeConfig::Domain::Boundary;
using Type = io::FpdeConfig::Type;
using Preconditioner = io::FpdeConfig::Solver::Preconditioner;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

using ReadArray = la::VecReadArray;
using WriteArray = la::VecArray;

/// An interior point next to a Dirichlet boundary point: the boundary value there enters the
/// right-hand side with `coefficient` (K / h_d^2).
struct DirichletNeighbour {
  std::size_t point = 0;  ///< owned point receiving the term
  double coefficient = 0.0;
};

}  // namespace

struct FpdeSolver::Impl {
  MPI_Comm comm;
  io::FpdeConfig config;
  FpdeSolverOptions options;
  FpdeGrid grid;
  FpdeTimeMesh mesh;
  core::Expression initial, source, boundary;
  bool nonlinear = false;  ///< the source depends on u
  bool source_cached = false;
  std::int64_t n = 0;
  FpdeStatistics stats;

  la::VecHandle u, u_prev, rhs;
  la::KspHandle ksp;
  la::SnesHandle snes;
  std::vector<double> f_now, f_prev;  ///< source values at the owned points
  std::vector<double> f_static;       ///< the source when it depends on x, y only
  std::int64_t f_prev_step = -1;      ///< the level f_prev belongs to

  // --- time_fractional ----------------------------------------------------------------
  std::optional<L1History> history;
  la::MatHandle lap;                    ///< W (-K Laplace_h) with the Dirichlet rows D
  la::MatHandle a;                      ///< c W + lap
  la::MatHandle jac;                    ///< Jacobian for a nonlinear source
  la::VecHandle cw;                     ///< W (0 on Dirichlet rows), scaled by c when building a
  std::vector<double> weight;           ///< W per owned point (0: Dirichlet boundary point)
  std::vector<double> flux_coeff;       ///< Neumann: -W sum_faces 2 / h_d per owned point
  double dirichlet_diag = 1.0;          ///< D, the diagonal of the Dirichlet rows
  std::vector<std::size_t> bnd_points;  ///< owned boundary points (Dirichlet or Neumann)
  std::vector<double> bnd_x, bnd_y, bnd_g;
  std::vector<DirichletNeighbour> nbrs;  ///< terms from Dirichlet neighbours
  std::vector<double> nbr_x, nbr_y, nbr_g;
  double c_built = std::numeric_limits<double>::quiet_NaN();
  la::MatHandle pmat;  ///< c_pc W + lap: the matrix the preconditioner is built from
  double c_pc = std::numeric_limits<double>::quiet_NaN();
  bool lag = false;        ///< the preconditioner may lag behind a changing c
  double lag_ratio = 2.0;  ///< rebuild when c / c_pc leaves [1/ratio, ratio]
  std::vector<double> du, lin_rhs, fu, fu_shift, work_u;

  // --- space_fractional ----------------------------------------------------------------
  std::unique_ptr<RieszShell> riesz;
  double theta = 0.5;
  CirculantKind circulant = CirculantKind::strang;
  double kappa_built = std::numeric_limits<double>::quiet_NaN();
  la::VecHandle z;

  /// Progress lines (options.progress_interval; <= 0: every step at info level).
  core::Progress progress_lines{options.log, std::max(options.progress_interval, 0.0)};

  Impl(MPI_Comm c, const io::FpdeConfig& cfg, FpdeSolverOptions opts)
      : comm(c),
        config(cfg),
        options(std::move(opts)),
        grid(c, cfg),
        mesh(cfg.time.horizon, cfg.time.steps, cfg.time.grading),
        initial(cfg.initial.compile()),
        source(cfg.source.compile()),
        boundary(cfg.boundary_value.compile()) {
    nonlinear = source.uses("u");
    const std::size_t np = grid.local_size();
    FRACMFG_PETSC_CHECK(DMCreateGlobalVector(grid.dm(), u.out()));
    FRACMFG_PETSC_CHECK(VecDuplicate(u, u_prev.out()));
    FRACMFG_PETSC_CHECK(VecDuplicate(u, rhs.out()));
    {
      WriteArray w(u);
      grid.evaluate(initial, 0.0, nullptr, w.get());
    }
    f_now.resize(np);
    f_prev.resize(np);
    if (config.type == Type::time_fractional) {
      setup_time_fractional();
    } else {
      setup_space_fractional();
    }
  }

  bool is_dirichlet() const { return grid.boundary_kind() == Boundary::dirichlet; }
  bool is_neumann() const { return grid.boundary_kind() == Boundary::neumann; }

  /// A string option -<prefix><name> from the options database, or `fallback`.
  std::string string_option(const char* name, const std::string& fallback) const {
    char value[256] = "";
    PetscBool set = PETSC_FALSE;
    FRACMFG_PETSC_CHECK(
        PetscOptionsGetString(nullptr, options.prefix.c_str(), name, value, sizeof value, &set));
    return set ? std::string(value) : fallback;
  }

  // ====================================================================================
  // time_fractional
  // ====================================================================================

  void setup_time_fractional() {
    if (config.solver.preconditioner == Preconditioner::circulant) {
      throw Error(
          "fpde: solver.preconditioner circulant applies to type space_fractional; use auto "
          "or none for time_fractional");
    }
    const auto method = config.history.method == io::FpdeConfig::History::Method::soe
                            ? L1History::Method::soe
                            : L1History::Method::direct;
    history.emplace(method, config.order, mesh, grid.local_size(), config.history.tolerance);
    classify_points();
    assemble_laplacian();
    FRACMFG_PETSC_CHECK(MatDuplicate(lap, MAT_COPY_VALUES, a.out()));
    FRACMFG_PETSC_CHECK(VecDuplicate(u, cw.out()));
    const std::size_t np = grid.local_size();
    du.resize(np);
    lin_rhs.resize(np);
    if (nonlinear) {
      fu.resize(np);
      fu_shift.resize(np);
      work_u.resize(np);
      FRACMFG_PETSC_CHECK(MatDuplicate(lap, MAT_COPY_VALUES, jac.out()));
      snes = la::create_snes(comm);
      FRACMFG_PETSC_CHECK(SNESSetOptionsPrefix(snes, options.prefix.c_str()));
      FRACMFG_PETSC_CHECK(SNESSetFunction(snes, nullptr, &Impl::snes_function, this));
      FRACMFG_PETSC_CHECK(SNESSetJacobian(snes, jac, jac, &Impl::snes_jacobian, this));
      FRACMFG_PETSC_CHECK(SNESSetTolerances(snes, 1e-50, 1e-10, 1e-14, 50, 10000));
      KSP inner = nullptr;
      FRACMFG_PETSC_CHECK(SNESGetKSP(snes, &inner));
      configure_time_ksp(inner);
      FRACMFG_PETSC_CHECK(SNESSetFromOptions(snes));
    } else {
      FRACMFG_PETSC_CHECK(MatDuplicate(lap, MAT_COPY_VALUES, pmat.out()));
      create_time_ksp();
      // An iterative method may keep a preconditioner built for a nearby c (graded meshes
      // change c every step); a direct solve (PREONLY) needs the exact matrix.
      KSPType type = nullptr;
      FRACMFG_PETSC_CHECK(KSPGetType(ksp, &type));
      lag = std::string(type) != KSPPREONLY;
      PetscReal ratio = lag_ratio;
      PetscBool set = PETSC_FALSE;
      FRACMFG_PETSC_CHECK(
          PetscOptionsGetReal(nullptr, options.prefix.c_str(), "-pc_lag_ratio", &ratio, &set));
      if (set) lag_ratio = ratio;
      if (!(lag_ratio > 1.0)) lag = false;
    }
  }

  /// A new KSP from the defaults and the options database. Each preconditioner setup
  /// happens on a fresh object, so it depends only on its matrix (GAMG keeps data between
  /// setups of one object, which would make a restarted run differ from an uninterrupted
  /// one).
  void create_time_ksp() {
    ksp = la::create_ksp(comm);
    FRACMFG_PETSC_CHECK(KSPSetOptionsPrefix(ksp, options.prefix.c_str()));
    configure_time_ksp(ksp);
    FRACMFG_PETSC_CHECK(KSPSetFromOptions(ksp));
    keep_preonly_exact(ksp);
    set_initial_guess(ksp);
  }

  /// PREONLY is the 1D default because the tridiagonal PC is exact; when the options choose
  /// another PC but no KSP, CG takes over (PREONLY with, say, Jacobi would be wrong).
  void keep_preonly_exact(KSP k) const {
    KSPType ktype = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetType(k, &ktype));
    if (ktype == nullptr || std::string(ktype) != KSPPREONLY) return;
    PetscBool user_ksp = PETSC_FALSE;
    FRACMFG_PETSC_CHECK(
        PetscOptionsHasName(nullptr, options.prefix.c_str(), "-ksp_type", &user_ksp));
    if (user_ksp) return;
    PC pc = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetPC(k, &pc));
    PCType ptype = nullptr;
    FRACMFG_PETSC_CHECK(PCGetType(pc, &ptype));
    const std::string p = ptype ? ptype : "";
    const bool exact =
        p == la::tridiag_pc_type || p == PCLU || p == PCCHOLESKY || p == PCREDUNDANT || p == PCSVD;
    if (!exact) FRACMFG_PETSC_CHECK(KSPSetType(k, KSPCG));
  }

  void configure_time_ksp(KSP k) {
    PC pc = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetPC(k, &pc));
    FRACMFG_PETSC_CHECK(KSPSetTolerances(k, 1e-10, 1e-50, PETSC_DEFAULT, 10000));
    if (config.solver.preconditioner == Preconditioner::none) {
      FRACMFG_PETSC_CHECK(KSPSetType(k, KSPCG));
      FRACMFG_PETSC_CHECK(PCSetType(pc, PCNONE));
    } else if (grid.dimension() == 1) {
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

  /// A Krylov method starts from u^{n-1}; PREONLY must start from zero.
  static void set_initial_guess(KSP k) {
    KSPType type = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetType(k, &type));
    const bool preonly = type != nullptr && std::string(type) == KSPPREONLY;
    FRACMFG_PETSC_CHECK(KSPSetInitialGuessNonzero(k, preonly ? PETSC_FALSE : PETSC_TRUE));
  }

  /// Weights, Neumann flux coefficients, boundary point and Dirichlet neighbour lists.
  void classify_points() {
    const std::size_t np = grid.local_size();
    const int dim = grid.dimension();
    const double k = config.diffusivity;
    weight.assign(np, 1.0);
    flux_coeff.assign(np, 0.0);
    dirichlet_diag = 0.0;
    for (int d = 0; d < dim; ++d) dirichlet_diag += 2.0 * k / (grid.spacing(d) * grid.spacing(d));
    const auto& side = grid.boundary();
    for (std::size_t p = 0; p < np; ++p) {
      if (side[p] == 0) continue;
      bnd_points.push_back(p);
      bnd_x.push_back(grid.x()[p]);
      bnd_y.push_back(grid.y()[p]);
      if (is_dirichlet()) {
        weight[p] = 0.0;
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
          faces += 2.0 / grid.spacing(d);
        }
      }
      weight[p] = w;
      flux_coeff[p] = -w * faces;
    }
    bnd_g.resize(bnd_points.size());
    if (!is_dirichlet()) return;
    // Interior points next to a Dirichlet point get K / h^2 g(neighbour) on the right.
    const PetscInt nx = grid.points(0);
    const PetscInt ny = grid.points(1);
    std::size_t p = 0;
    for (PetscInt j = grid.begin(1); j < grid.begin(1) + grid.count(1); ++j) {
      for (PetscInt i = grid.begin(0); i < grid.begin(0) + grid.count(0); ++i, ++p) {
        if (side[p] != 0) continue;
        auto add = [&](PetscInt ii, PetscInt jj, double h) {
          nbrs.push_back({p, k / (h * h)});
          nbr_x.push_back(static_cast<double>(ii) * grid.spacing(0));
          nbr_y.push_back(dim == 2 ? static_cast<double>(jj) * grid.spacing(1) : 0.0);
        };
        if (i == 1) add(0, j, grid.spacing(0));
        if (i == nx - 2) add(nx - 1, j, grid.spacing(0));
        if (dim == 2 && j == 1) add(i, 0, grid.spacing(1));
        if (dim == 2 && j == ny - 2) add(i, ny - 1, grid.spacing(1));
      }
    }
    nbr_g.resize(nbrs.size());
  }

  /// lap = W (-K Laplace_h) (Neumann ghost points folded in, Dirichlet neighbours dropped)
  /// and D on the Dirichlet rows. Symmetric.
  void assemble_laplacian() {
    FRACMFG_PETSC_CHECK(DMCreateMatrix(grid.dm(), lap.out()));
    FRACMFG_PETSC_CHECK(MatSetOption(lap, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    const int dim = grid.dimension();
    const double k = config.diffusivity;
    const bool per = grid.periodic();
    const auto& side = grid.boundary();
    const PetscInt nn[2] = {grid.points(0), grid.points(1)};
    std::size_t p = 0;
    for (PetscInt j = grid.begin(1); j < grid.begin(1) + grid.count(1); ++j) {
      for (PetscInt i = grid.begin(0); i < grid.begin(0) + grid.count(0); ++i, ++p) {
        MatStencil row{};
        row.i = i;
        row.j = j;
        MatStencil cols[5];
        double vals[5];
        int nc = 0;
        if (is_dirichlet() && side[p] != 0) {
          cols[0] = row;
          vals[0] = dirichlet_diag;
          FRACMFG_PETSC_CHECK(MatSetValuesStencil(lap, 1, &row, 1, cols, vals, INSERT_VALUES));
          continue;
        }
        const double w = weight[p];
        double diag = 0.0;
        for (int d = 0; d < dim; ++d) {
          const double c = k / (grid.spacing(d) * grid.spacing(d));
          const PetscInt idx = d == 0 ? i : j;
          diag += 2.0 * w * c;
          const bool low = !per && idx == 0;
          const bool high = !per && idx == nn[d] - 1;
          for (int dir : {-1, 1}) {
            const PetscInt other = idx + dir;
            if ((dir < 0 && low) || (dir > 0 && high)) continue;  // ghost point, folded in
            double coeff = -w * c;
            if (is_neumann() && (low || high)) coeff = -2.0 * w * c;
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
        FRACMFG_PETSC_CHECK(MatSetValuesStencil(lap, 1, &row, nc, cols, vals, INSERT_VALUES));
      }
    }
    FRACMFG_PETSC_CHECK(MatAssemblyBegin(lap, MAT_FINAL_ASSEMBLY));
    FRACMFG_PETSC_CHECK(MatAssemblyEnd(lap, MAT_FINAL_ASSEMBLY));
    FRACMFG_PETSC_CHECK(MatSetOption(lap, MAT_SYMMETRIC, PETSC_TRUE));
  }

  /// a = c W + lap, rebuilt only when c changes (every step on a graded mesh, once on a
  /// uniform one); the preconditioner's matrix is rebuilt (with a new KSP) when c has moved
  /// by more than lag_ratio from the c it was built for, or at every change without lag.
  void build_operator(double c) {
    if (c != c_built) {
      set_matrix(a, c);
      c_built = c;
    }
    if (nonlinear) return;
    const bool fresh = std::isnan(c_pc);
    const bool rebuild =
        fresh || (lag ? (c > lag_ratio * c_pc || c * lag_ratio < c_pc) : c != c_pc);
    if (rebuild) build_preconditioner(c);
    FRACMFG_PETSC_CHECK(KSPSetOperators(ksp, a, pmat));
  }

  void set_matrix(Mat m, double c) {
    FRACMFG_PETSC_CHECK(MatCopy(lap, m, SAME_NONZERO_PATTERN));
    {
      WriteArray w(cw);
      for (std::size_t p = 0; p < weight.size(); ++p) w.get()[p] = c * weight[p];
    }
    FRACMFG_PETSC_CHECK(MatDiagonalSet(m, cw, ADD_VALUES));
    FRACMFG_PETSC_CHECK(MatSetOption(m, MAT_SYMMETRIC, PETSC_TRUE));
  }

  void build_preconditioner(double c) {
    if (!std::isnan(c_pc)) create_time_ksp();
    set_matrix(pmat, c);
    c_pc = c;
  }

  /// Source values at the owned points at level m (cached when f depends on x, y only).
  void evaluate_source(std::int64_t m, const double* uvals, std::vector<double>& out) {
    const bool depends_on_time = source.uses("t");
    if (!nonlinear && !depends_on_time) {
      if (!source_cached) {
        f_static.resize(grid.local_size());
        grid.evaluate(source, 0.0, nullptr, f_static.data());
        source_cached = true;
      }
      std::copy(f_static.begin(), f_static.end(), out.begin());
      return;
    }
    grid.evaluate(source, mesh.time(m), uvals, out.data());
  }

  /// The right-hand side without the source term at level m (= n + 1): boundary rows,
  /// W (c u^{n} - h), Dirichlet neighbours and Neumann fluxes.
  void time_rhs_without_source(std::int64_t m, double c, const double* uprev) {
    const double t = mesh.time(m);
    const std::vector<double>& h = history->history();
    const std::size_t np = grid.local_size();
    for (std::size_t p = 0; p < np; ++p) lin_rhs[p] = weight[p] * (c * uprev[p] - h[p]);
    if (!bnd_points.empty()) {
      FpdeGrid::evaluate_at(boundary, t, bnd_points.size(), bnd_x.data(), bnd_y.data(),
                            bnd_g.data());
      for (std::size_t b = 0; b < bnd_points.size(); ++b) {
        const std::size_t p = bnd_points[b];
        if (is_dirichlet()) {
          lin_rhs[p] = dirichlet_diag * bnd_g[b];
        } else {
          lin_rhs[p] += flux_coeff[p] * bnd_g[b];
        }
      }
    }
    if (!nbrs.empty()) {
      FpdeGrid::evaluate_at(boundary, t, nbrs.size(), nbr_x.data(), nbr_y.data(), nbr_g.data());
      for (std::size_t q = 0; q < nbrs.size(); ++q) {
        lin_rhs[nbrs[q].point] += nbrs[q].coefficient * nbr_g[q];
      }
    }
  }

  void step_time_fractional() {
    const std::int64_t m = n + 1;
    const double c = history->diagonal(m);
    build_operator(c);
    FRACMFG_PETSC_CHECK(VecCopy(u, u_prev));
    {
      ReadArray up(u_prev);
      time_rhs_without_source(m, c, up.get());
    }
    const auto t0 = Clock::now();
    if (!nonlinear) {
      evaluate_source(m, nullptr, f_now);
      {
        WriteArray b(rhs);
        for (std::size_t p = 0; p < lin_rhs.size(); ++p) {
          b.get()[p] = lin_rhs[p] + weight[p] * f_now[p];
        }
      }
      FRACMFG_PETSC_CHECK_SOLVE(KSPSolve(ksp, rhs, u));
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
    } else {
      current_level = m;
      FRACMFG_PETSC_CHECK_SOLVE(SNESSolve(snes, nullptr, u));
      SNESConvergedReason reason;
      FRACMFG_PETSC_CHECK(SNESGetConvergedReason(snes, &reason));
      PetscInt its = 0;
      PetscInt lits = 0;
      FRACMFG_PETSC_CHECK(SNESGetIterationNumber(snes, &its));
      FRACMFG_PETSC_CHECK(SNESGetLinearSolveIterations(snes, &lits));
      stats.nonlinear_iterations += its;
      record_linear(lits);
      if (reason < 0) {
        std::ostringstream os;
        os << "fpde: the nonlinear solve of step " << m << " failed ("
           << SNESConvergedReasons[reason] << " after " << its << " Newton iterations)";
        solve_failed(os.str());
      }
    }
    stats.solve_seconds += seconds_since(t0);
    const auto t1 = Clock::now();
    {
      ReadArray un(u);
      ReadArray up(u_prev);
      for (std::size_t p = 0; p < du.size(); ++p) du[p] = un.get()[p] - up.get()[p];
    }
    history->push(du.data());
    stats.history_seconds += seconds_since(t1);
  }

  /// A KSP's or SNES's converged reason is the same on every rank, so every rank gets here
  /// together: the failure is agreed already and thrown as such.
  [[noreturn]] static void solve_failed(const std::string& message) {
    throw core::CollectiveError(message, ExitCode::numerical, 0);
  }

  /// Collective. A NaN can stay in one rank's block (a point-wise preconditioner, a source
  /// that is NaN there only), and VecNorm's maximum may drop it: every rank checks its points
  /// and all agree, naming the first point of the lowest rank that has one.
  void check_finite() const {
    core::collective(comm, [&] {
      ReadArray ua(u);
      for (std::size_t p = 0; p < grid.local_size(); ++p) {
        const double v = ua.get()[p];
        if (std::isfinite(v)) continue;
        std::ostringstream os;
        os << "fpde: the solution is not finite (";
        if (std::isnan(v)) {
          os << "NaN";
        } else {
          os << v;
        }
        os << ") at step " << n << " (t = " << mesh.time(n) << "), x = " << grid.x()[p];
        if (grid.dimension() == 2) os << ", y = " << grid.y()[p];
        throw NumericalError(os.str());
      }
    });
  }

  void record_linear(PetscInt its) {
    stats.last_linear_iterations = static_cast<int>(its);
    stats.linear_iterations += its;
  }

  // --- nonlinear source: F(u) = a u - lin_rhs - W f(t, x, u) ------------------------------
  std::int64_t current_level = 0;

  static PetscErrorCode snes_function(SNES, Vec x, Vec f, void* ctx) {
    FRACMFG_PETSC_CALLBACK_BEGIN
    auto* self = static_cast<Impl*>(ctx);
    FRACMFG_PETSC_CHECK(MatMult(self->a, x, f));
    ReadArray xa(x);
    self->grid.evaluate(self->source, self->mesh.time(self->current_level), xa.get(),
                        self->fu.data());
    WriteArray fa(f);
    for (std::size_t p = 0; p < self->fu.size(); ++p) {
      fa.get()[p] -= self->lin_rhs[p] + self->weight[p] * self->fu[p];
    }
    FRACMFG_PETSC_CALLBACK_END
  }

  static PetscErrorCode snes_jacobian(SNES, Vec x, Mat j, Mat, void* ctx) {
    FRACMFG_PETSC_CALLBACK_BEGIN
    auto* self = static_cast<Impl*>(ctx);
    const double t = self->mesh.time(self->current_level);
    {
      ReadArray xa(x);
      const std::size_t np = self->fu.size();
      self->grid.evaluate(self->source, t, xa.get(), self->fu.data());
      for (std::size_t p = 0; p < np; ++p) {
        const double h = 1.4901161193847656e-08 * std::max(1.0, std::fabs(xa.get()[p]));
        self->work_u[p] = xa.get()[p] + h;
      }
      self->grid.evaluate(self->source, t, self->work_u.data(), self->fu_shift.data());
      WriteArray w(self->cw);
      for (std::size_t p = 0; p < np; ++p) {
        const double h = self->work_u[p] - xa.get()[p];
        w.get()[p] = -self->weight[p] * (self->fu_shift[p] - self->fu[p]) / h;
      }
    }
    FRACMFG_PETSC_CHECK(MatCopy(self->a, j, SAME_NONZERO_PATTERN));
    FRACMFG_PETSC_CHECK(MatDiagonalSet(j, self->cw, ADD_VALUES));
    FRACMFG_PETSC_CALLBACK_END
  }

  // ====================================================================================
  // space_fractional
  // ====================================================================================

  void setup_space_fractional() {
    if (nonlinear) {
      throw Error("fpde: a source depending on u is supported for type time_fractional only");
    }
    riesz = std::make_unique<RieszShell>(grid, config.order);
    const std::string scheme = string_option("-time_scheme", "crank_nicolson");
    if (scheme == "crank_nicolson" || scheme == "cn") {
      theta = 0.5;
    } else if (scheme == "euler" || scheme == "implicit_euler") {
      theta = 1.0;
    } else {
      throw Error("fpde: -" + options.prefix + "time_scheme " + scheme +
                  ": expected euler or crank_nicolson");
    }
    const std::string kind = string_option("-circulant", "strang");
    if (kind == "strang") {
      circulant = CirculantKind::strang;
    } else if (kind == "tchan" || kind == "t_chan") {
      circulant = CirculantKind::tchan;
    } else {
      throw Error("fpde: -" + options.prefix + "circulant " + kind + ": expected strang or tchan");
    }
    FRACMFG_PETSC_CHECK(VecDuplicate(u, z.out()));
    if (is_dirichlet()) {
      const auto& side = grid.boundary();
      for (std::size_t p = 0; p < side.size(); ++p) {
        if (side[p] == 0) continue;
        bnd_points.push_back(p);
        bnd_x.push_back(grid.x()[p]);
        bnd_y.push_back(grid.y()[p]);
      }
      bnd_g.resize(bnd_points.size());
    }
    ksp = la::create_ksp(comm);
    FRACMFG_PETSC_CHECK(KSPSetOptionsPrefix(ksp, options.prefix.c_str()));
    FRACMFG_PETSC_CHECK(KSPSetType(ksp, KSPCG));
    FRACMFG_PETSC_CHECK(KSPSetTolerances(ksp, 1e-10, 1e-50, PETSC_DEFAULT, 10000));
    PC pc = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
    if (config.solver.preconditioner == Preconditioner::none) {
      FRACMFG_PETSC_CHECK(PCSetType(pc, PCNONE));
    } else {
      riesz->set_preconditioner(pc, circulant);
    }
    FRACMFG_PETSC_CHECK(KSPSetOperators(ksp, riesz->matrix(), riesz->matrix()));
    FRACMFG_PETSC_CHECK(KSPSetFromOptions(ksp));
    set_initial_guess(ksp);
  }

  void step_space_fractional() {
    const std::int64_t m = n + 1;
    const double tau = mesh.step(m);
    const double k = config.diffusivity;
    const double kappa = theta * tau * k;
    if (kappa != kappa_built) {
      riesz->set_coefficients(1.0, kappa);
      FRACMFG_PETSC_CHECK(KSPSetOperators(ksp, riesz->matrix(), riesz->matrix()));
      kappa_built = kappa;
    }
    // z: u^{n} at the unknowns, (1 - theta) g^n + theta g^{n+1} at the boundary points.
    FRACMFG_PETSC_CHECK(VecCopy(u, z));
    const double t_new = mesh.time(m);
    if (!bnd_points.empty()) {
      FpdeGrid::evaluate_at(boundary, t_new, bnd_points.size(), bnd_x.data(), bnd_y.data(),
                            bnd_g.data());
      WriteArray za(z);
      for (std::size_t b = 0; b < bnd_points.size(); ++b) {
        double& v = za.get()[bnd_points[b]];
        v = (1.0 - theta) * v + theta * bnd_g[b];
      }
    }
    // rhs = z - (1 - theta) tau K T z_int - tau K E(z_b), then the sources and the boundary
    // values.
    riesz->apply(z, rhs, 1.0, -(1.0 - theta) * tau * k, -tau * k);
    if (f_prev_step != n) {
      evaluate_source(n, nullptr, f_prev);
      f_prev_step = n;
    }
    evaluate_source(m, nullptr, f_now);
    {
      WriteArray b(rhs);
      const auto& side = grid.boundary();
      for (std::size_t p = 0; p < side.size(); ++p) {
        if (side[p] != 0) continue;
        b.get()[p] += tau * (theta * f_now[p] + (1.0 - theta) * f_prev[p]);
      }
      for (std::size_t q = 0; q < bnd_points.size(); ++q) b.get()[bnd_points[q]] = bnd_g[q];
    }
    const auto t0 = Clock::now();
    FRACMFG_PETSC_CHECK_SOLVE(KSPSolve(ksp, rhs, u));
    stats.solve_seconds += seconds_since(t0);
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
    std::swap(f_prev, f_now);
    f_prev_step = m;
  }

  // ====================================================================================

  void advance() {
    if (n >= mesh.steps()) throw Error("fpde: advance() after the last step");
    const auto t0 = Clock::now();
    if (config.type == Type::time_fractional) {
      step_time_fractional();
    } else {
      step_space_fractional();
    }
    ++n;
    ++stats.steps;
    check_finite();
    PetscReal norm = 0.0;
    FRACMFG_PETSC_CHECK(VecNorm(u, NORM_INFINITY, &norm));
    const double step_seconds = seconds_since(t0);
    stats.total_seconds += step_seconds;
    report(norm, step_seconds);
  }

  void report(double norm, double step_seconds) {
    const core::LogLevel level = progress_lines.step(n >= mesh.steps(), step_seconds);
    if (!progress_lines.enabled(level)) return;
    std::ostringstream os;
    os << "fpde: step " << n << "/" << mesh.steps() << ", t = " << mesh.time(n)
       << ", max|u| = " << norm << ", iterations " << stats.last_linear_iterations << "; elapsed "
       << core::format_duration(progress_lines.elapsed()) << ", ETA "
       << core::format_duration(progress_lines.eta_steps(mesh.steps() - n));
    progress_lines.write(level, os.str());
  }
};

FpdeSolver::FpdeSolver(MPI_Comm comm, const io::FpdeConfig& config, FpdeSolverOptions options)
    : impl_(std::make_unique<Impl>(comm, config, std::move(options))) {}

FpdeSolver::~FpdeSolver() = default;

const io::FpdeConfig& FpdeSolver::config() const {
  return impl_->config;
}
MPI_Comm FpdeSolver::comm() const {
  return impl_->comm;
}
const FpdeGrid& FpdeSolver::grid() const {
  return impl_->grid;
}
const FpdeTimeMesh& FpdeSolver::mesh() const {
  return impl_->mesh;
}
DM FpdeSolver::dm() const {
  return impl_->grid.dm();
}
Vec FpdeSolver::solution() const {
  return impl_->u;
}
std::int64_t FpdeSolver::step() const {
  return impl_->n;
}
std::int64_t FpdeSolver::steps() const {
  return impl_->mesh.steps();
}
double FpdeSolver::time() const {
  return impl_->mesh.time(impl_->n);
}
const FpdeStatistics& FpdeSolver::statistics() const {
  return impl_->stats;
}
const L1History* FpdeSolver::history() const {
  return impl_->history ? &*impl_->history : nullptr;
}
KSP FpdeSolver::ksp() const {
  if (impl_->snes) {
    KSP inner = nullptr;
    FRACMFG_PETSC_CHECK(SNESGetKSP(impl_->snes, &inner));
    return inner;
  }
  return impl_->ksp;
}

void FpdeSolver::advance() {
  impl_->advance();
}

void FpdeSolver::run_until(std::int64_t last,
                           const std::function<void(const FpdeSolver&)>& after_step) {
  const std::int64_t end = std::min(last, steps());
  while (step() < end) {
    advance();
    if (after_step) after_step(*this);
  }
}

void FpdeSolver::write_checkpoint(const std::string& path) const {
  const Impl& m = *impl_;
  io::CheckpointWriter ck(m.comm, path, m.n, time(), "fpde");
  ck.add_scalar_string("type", io::to_string(m.config.type));
  ck.add_scalar_double("order", m.config.order);
  ck.add_scalar_int64("steps", m.mesh.steps());
  ck.add_field("u", dm(), m.u);
  if (m.history) {
    ck.add_scalar_string("history_method", io::to_string(m.config.history.method));
    ck.add_scalar_int64("history_levels", m.history->levels());
    ck.add_scalar_double("pc_coefficient", m.c_pc);
    const auto vectors = static_cast<PetscInt>(m.history->state_size());
    la::DmHandle companion = m.grid.create_companion(vectors);
    la::VecHandle state;
    FRACMFG_PETSC_CHECK(DMCreateGlobalVector(companion, state.out()));
    {
      WriteArray s(state);
      for (std::size_t k = 0; k < m.history->state_size(); ++k) {
        m.history->save_state(k, s.get() + k, static_cast<std::size_t>(vectors));
      }
    }
    ck.add_field("history", companion, state);
  }
  ck.commit();
}

void FpdeSolver::restart(const std::string& path) {
  Impl& m = *impl_;
  io::CheckpointReader rk(m.comm, path);
  auto mismatch = [&](const std::string& what) {
    throw Error("fpde: the checkpoint " + path + " is for another problem (" + what + ")");
  };
  if (rk.scalar_string("type") != io::to_string(m.config.type)) mismatch("type");
  if (rk.scalar_double("order") != m.config.order) mismatch("order");
  if (rk.scalar_int64("steps") != m.mesh.steps()) mismatch("time steps");
  const io::FieldShape shape = rk.field_shape("u");
  if (shape.dim != m.grid.dimension() || shape.size[0] != m.grid.points(0) ||
      (m.grid.dimension() == 2 && shape.size[1] != m.grid.points(1))) {
    mismatch("grid " + io::to_string(shape));
  }
  const std::int64_t step = rk.step();
  if (step < 0 || step > m.mesh.steps()) mismatch("step " + std::to_string(step));
  rk.read_field("u", dm(), m.u);
  if (m.history) {
    if (rk.scalar_string("history_method") != io::to_string(m.config.history.method)) {
      mismatch("history method");
    }
    const std::int64_t levels = rk.scalar_int64("history_levels");
    const io::FieldShape hs = rk.field_shape("history");
    la::DmHandle companion = m.grid.create_companion(hs.dof);
    la::VecHandle state;
    FRACMFG_PETSC_CHECK(DMCreateGlobalVector(companion, state.out()));
    rk.read_field("history", companion, state);
    ReadArray s(state);
    const auto vectors = static_cast<std::size_t>(hs.dof);
    m.history->load_state(levels, vectors, s.get(), vectors, 1);
  }
  m.n = step;
  m.f_prev_step = -1;
  m.c_built = std::numeric_limits<double>::quiet_NaN();
  if (m.history && !m.nonlinear) {
    // The preconditioner of the uninterrupted run at this step was built for c_pc.
    const double c_pc = rk.scalar_double("pc_coefficient");
    if (!std::isnan(c_pc)) m.build_preconditioner(c_pc);
  }
  m.kappa_built = std::numeric_limits<double>::quiet_NaN();
}

FpdeErrorNorms FpdeSolver::error_against(const core::Expression& exact) const {
  const Impl& m = *impl_;
  std::vector<double> ex(m.grid.local_size());
  m.grid.evaluate(exact, time(), nullptr, ex.data());
  double local[2] = {0.0, 0.0};
  {
    ReadArray ua(m.u);
    for (std::size_t p = 0; p < ex.size(); ++p) {
      const double e = std::fabs(ua.get()[p] - ex[p]);
      local[0] = std::max(local[0], e);
      local[1] += e * e;
    }
  }
  double global[2] = {0.0, 0.0};
  MPI_Allreduce(&local[0], &global[0], 1, MPI_DOUBLE, MPI_MAX, m.comm);
  MPI_Allreduce(&local[1], &global[1], 1, MPI_DOUBLE, MPI_SUM, m.comm);
  double cell = m.grid.spacing(0);
  if (m.grid.dimension() == 2) cell *= m.grid.spacing(1);
  return {global[0], std::sqrt(cell * global[1])};
}

}  // namespace fracmfg::frac
