#include "fracmfg/frac/riesz_shell.hpp"

#include <petscdmda.h>

#include <cmath>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/la/petsc_handles.hpp"

namespace fracmfg::frac {

namespace {

/// Everything the PETSc callbacks need.
struct ShellState {
  const FpdeGrid& grid;
  RieszOperator op;
  la::MatHandle mat;
  la::VecHandle natural;  // natural-ordering global vector
  la::VecHandle all;      // sequential, the whole vector on every rank
  la::VecScatterHandle to_all;
  std::vector<double> result;  // full-grid result
  double sigma = 1.0;
  double kappa = 0.0;
  std::vector<double> weight;  // owned points; empty: 1 everywhere
  double weight_ref = 1.0;
  la::VecHandle scaled;  // the PC's input times weight^(1/2)
  CirculantKind kind = CirculantKind::strang;
  std::int64_t products = 0;
  std::int64_t pc_applications = 0;

  ShellState(const FpdeGrid& g, double order)
      : grid(g),
        op(order, g.dimension(),
           {static_cast<std::size_t>(g.points(0)), static_cast<std::size_t>(g.points(1))},
           {g.spacing(0), g.dimension() == 2 ? g.spacing(1) : 1.0}, g.periodic()),
        result(op.size()) {}

  /// The whole of x on this rank (natural order); valid until release_all().
  const double* gather(Vec x) {
    FRACMFG_PETSC_CHECK(DMDAGlobalToNaturalBegin(grid.dm(), x, INSERT_VALUES, natural));
    FRACMFG_PETSC_CHECK(DMDAGlobalToNaturalEnd(grid.dm(), x, INSERT_VALUES, natural));
    FRACMFG_PETSC_CHECK(VecScatterBegin(to_all, natural, all, INSERT_VALUES, SCATTER_FORWARD));
    FRACMFG_PETSC_CHECK(VecScatterEnd(to_all, natural, all, INSERT_VALUES, SCATTER_FORWARD));
    const PetscScalar* a = nullptr;
    FRACMFG_PETSC_CHECK(VecGetArrayRead(all, &a));
    return a;
  }
  void release_all(const double* a) {
    const PetscScalar* p = a;
    FRACMFG_PETSC_CHECK(VecRestoreArrayRead(all, &p));
  }
  /// y's owned box from the full-grid array `full`.
  void scatter_own(const std::vector<double>& full, Vec y) {
    PetscScalar* out = nullptr;
    FRACMFG_PETSC_CHECK(VecGetArray(y, &out));
    std::size_t p = 0;
    const auto nx = static_cast<std::size_t>(grid.points(0));
    for (PetscInt j = grid.begin(1); j < grid.begin(1) + grid.count(1); ++j) {
      for (PetscInt i = grid.begin(0); i < grid.begin(0) + grid.count(0); ++i, ++p) {
        out[p] = full[static_cast<std::size_t>(j) * nx + static_cast<std::size_t>(i)];
      }
    }
    FRACMFG_PETSC_CHECK(VecRestoreArray(y, &out));
  }

  void apply(Vec x, Vec y, double s, double k, double k_ext) {
    const double* full = gather(x);
    op.apply(full, result.data(), weight.empty() ? s : 0.0, k, k_ext);
    release_all(full);
    scatter_own(result, y);
    if (!weight.empty() && s != 0.0) {
      // y += s W^-1 x at the unknowns (the boundary rows are y = x already).
      la::VecReadArray xa(x);
      la::VecArray ya(y);
      const auto& side = grid.boundary();
      for (std::size_t p = 0; p < weight.size(); ++p) {
        if (side[p] == 0) ya.get()[p] += s * xa.get()[p] / weight[p];
      }
    }
    ++products;
  }

  /// W^(1/2) (sigma I + kappa weight_ref C)^-1 W^(1/2) x (W = I without a weight).
  void apply_pc(Vec x, Vec y) {
    Vec in = x;
    if (!weight.empty()) {
      FRACMFG_PETSC_CHECK(VecCopy(x, scaled));
      la::VecArray sa(scaled);
      for (std::size_t p = 0; p < weight.size(); ++p) sa.get()[p] *= std::sqrt(weight[p]);
      in = scaled;
    }
    const double* full = gather(in);
    op.apply_circulant_inverse(kind, full, result.data(), sigma, kappa * weight_ref);
    release_all(full);
    scatter_own(result, y);
    if (!weight.empty()) {
      la::VecArray ya(y);
      for (std::size_t p = 0; p < weight.size(); ++p) ya.get()[p] *= std::sqrt(weight[p]);
    }
    ++pc_applications;
  }
};

PetscErrorCode shell_mult(Mat a, Vec x, Vec y) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  void* ctx = nullptr;
  FRACMFG_PETSC_CHECK(MatShellGetContext(a, &ctx));
  auto* impl = static_cast<ShellState*>(ctx);
  impl->apply(x, y, impl->sigma, impl->kappa, 0.0);
  FRACMFG_PETSC_CALLBACK_END
}

PetscErrorCode shell_diagonal(Mat a, Vec d) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  void* ctx = nullptr;
  FRACMFG_PETSC_CHECK(MatShellGetContext(a, &ctx));
  auto* impl = static_cast<ShellState*>(ctx);
  const FpdeGrid& g = impl->grid;
  const double order = impl->op.order();
  const double g0 = riesz_weights(order, 1)[0];
  double diag = std::pow(g.spacing(0), -order) * g0;
  if (g.dimension() == 2) diag += std::pow(g.spacing(1), -order) * g0;
  if (g.periodic()) {
    // The periodised weight c_0 = (1/N) sum_k lambda_k differs from g_0: take it from the
    // operator applied to a unit vector (same value at every point).
    std::vector<double> e(impl->op.size(), 0.0);
    std::vector<double> r(impl->op.size(), 0.0);
    e[0] = 1.0;
    impl->op.apply(e.data(), r.data(), 0.0, 1.0, 0.0);
    diag = r[0];
  }
  PetscScalar* out = nullptr;
  FRACMFG_PETSC_CHECK(VecGetArray(d, &out));
  for (std::size_t p = 0; p < g.local_size(); ++p) {
    const double w = impl->weight.empty() ? 1.0 : impl->weight[p];
    out[p] = g.boundary()[p] ? 1.0 : impl->sigma / w + impl->kappa * diag;
  }
  FRACMFG_PETSC_CHECK(VecRestoreArray(d, &out));
  FRACMFG_PETSC_CALLBACK_END
}

PetscErrorCode shell_pc_apply(PC pc, Vec x, Vec y) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  void* ctx = nullptr;
  FRACMFG_PETSC_CHECK(PCShellGetContext(pc, &ctx));
  static_cast<ShellState*>(ctx)->apply_pc(x, y);
  FRACMFG_PETSC_CALLBACK_END
}

}  // namespace

struct RieszShell::Impl : ShellState {
  using ShellState::ShellState;
};

RieszShell::RieszShell(const FpdeGrid& grid, double order) {
  if (grid.boundary_kind() == io::FpdeConfig::Domain::Boundary::neumann) {
    throw Error(
        "fpde: space_fractional supports the boundaries dirichlet and periodic, not neumann "
        "(fpde.domain.boundary)");
  }
  impl_ = std::make_unique<Impl>(grid, order);
  Impl& m = *impl_;
  FRACMFG_PETSC_CHECK(DMDACreateNaturalVector(grid.dm(), m.natural.out()));
  FRACMFG_PETSC_CHECK(VecScatterCreateToAll(m.natural, m.to_all.out(), m.all.out()));
  PetscInt local = 0, global = 0;
  Vec probe = nullptr;
  FRACMFG_PETSC_CHECK(DMGetGlobalVector(grid.dm(), &probe));
  FRACMFG_PETSC_CHECK(VecGetLocalSize(probe, &local));
  FRACMFG_PETSC_CHECK(VecGetSize(probe, &global));
  FRACMFG_PETSC_CHECK(DMRestoreGlobalVector(grid.dm(), &probe));
  FRACMFG_PETSC_CHECK(MatCreateShell(grid.comm(), local, local, global, global,
                                     static_cast<ShellState*>(&m), m.mat.out()));
  FRACMFG_PETSC_CHECK(
      MatShellSetOperation(m.mat, MATOP_MULT, reinterpret_cast<void (*)(void)>(shell_mult)));
  FRACMFG_PETSC_CHECK(MatShellSetOperation(m.mat, MATOP_MULT_TRANSPOSE,
                                           reinterpret_cast<void (*)(void)>(shell_mult)));
  FRACMFG_PETSC_CHECK(MatShellSetOperation(m.mat, MATOP_GET_DIAGONAL,
                                           reinterpret_cast<void (*)(void)>(shell_diagonal)));
  FRACMFG_PETSC_CHECK(MatSetOption(m.mat, MAT_SYMMETRIC, PETSC_TRUE));
  FRACMFG_PETSC_CHECK(MatSetDM(m.mat, grid.dm()));
}

RieszShell::~RieszShell() = default;

Mat RieszShell::matrix() const {
  return impl_->mat;
}
void RieszShell::set_coefficients(double sigma, double kappa) {
  if (sigma == impl_->sigma && kappa == impl_->kappa) return;
  impl_->sigma = sigma;
  impl_->kappa = kappa;
  // New values of the operator: an assembly marks the matrix as changed, so a PC built from
  // it (Jacobi, ...) is set up again.
  FRACMFG_PETSC_CHECK(MatAssemblyBegin(impl_->mat, MAT_FINAL_ASSEMBLY));
  FRACMFG_PETSC_CHECK(MatAssemblyEnd(impl_->mat, MAT_FINAL_ASSEMBLY));
}
void RieszShell::set_weight(std::vector<double> weight, double reference) {
  const FpdeGrid& g = impl_->grid;
  if (weight.size() != g.local_size()) {
    throw Error("RieszShell::set_weight: expected one weight per owned grid point");
  }
  for (std::size_t p = 0; p < weight.size(); ++p) {
    if (g.boundary()[p] != 0) weight[p] = 1.0;
  }
  if (!(reference > 0.0)) throw Error("RieszShell::set_weight: expected a positive reference");
  impl_->weight = std::move(weight);
  impl_->weight_ref = reference;
  if (!impl_->scaled) FRACMFG_PETSC_CHECK(DMCreateGlobalVector(g.dm(), impl_->scaled.out()));
  FRACMFG_PETSC_CHECK(MatAssemblyBegin(impl_->mat, MAT_FINAL_ASSEMBLY));
  FRACMFG_PETSC_CHECK(MatAssemblyEnd(impl_->mat, MAT_FINAL_ASSEMBLY));
}
double RieszShell::sigma() const {
  return impl_->sigma;
}
double RieszShell::kappa() const {
  return impl_->kappa;
}

void RieszShell::apply(Vec x, Vec y, double sigma, double kappa, double kappa_exterior) {
  impl_->apply(x, y, sigma, kappa, kappa_exterior);
}

void RieszShell::set_preconditioner(PC pc, CirculantKind kind) {
  impl_->kind = kind;
  FRACMFG_PETSC_CHECK(PCSetType(pc, PCSHELL));
  FRACMFG_PETSC_CHECK(PCShellSetContext(pc, static_cast<ShellState*>(impl_.get())));
  FRACMFG_PETSC_CHECK(PCShellSetApply(pc, shell_pc_apply));
  FRACMFG_PETSC_CHECK(PCShellSetName(pc, kind == CirculantKind::strang
                                             ? "circulant (Strang) by FFT"
                                             : "circulant (T. Chan) by FFT"));
}

RieszOperator& RieszShell::op() {
  return impl_->op;
}
std::int64_t RieszShell::products() const {
  return impl_->products;
}
std::int64_t RieszShell::preconditioner_applications() const {
  return impl_->pc_applications;
}

}  // namespace fracmfg::frac
