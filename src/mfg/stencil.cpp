#include "mfg/stencil.hpp"

#include <algorithm>
#include <array>
#include <type_traits>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/mfg/hamiltonian.hpp"
#include "mfg/row_kernels.hpp"
#include "mfg/work_scope.hpp"

namespace fracmfg::mfg::detail {

namespace {

const unsigned char* wall_mask(const Model& model) {
  return model.has_obstacle() ? model.wall_ghosted().data() : nullptr;
}

std::array<double, 3> inverse_spacings(const Grid& g) {
  return {1.0 / g.spacing(0), g.dim >= 2 ? 1.0 / g.spacing(1) : 0.0,
          g.dim == 3 ? 1.0 / g.spacing(2) : 0.0};
}

// Calls f(integral_constant dim, bool_constant power) for the grid's dimension and the
// Hamiltonian's form.
template <class F>
void with_dim_and_form(int dim, bool power, F&& f) {
  auto form = [&](auto d) {
    if (power) {
      f(d, std::true_type{});
    } else {
      f(d, std::false_type{});
    }
  };
  if (dim == 1) {
    form(std::integral_constant<int, 1>{});
  } else if (dim == 2) {
    form(std::integral_constant<int, 2>{});
  } else {
    form(std::integral_constant<int, 3>{});
  }
}

// The stencil of owned point k from its neighbours' ghosted indices, the exit ghosts 2 g - u
// in place of the values beyond exit faces.
kernels::detail::PointStencil stencil_at(const double* u, const Neighbours& nb,
                                         const ExitFaces& exits, const OwnedBox& b, PetscInt k) {
  kernels::detail::PointStencil st{};
  const double up = u[nb.self];
  st.up = up;
  st.minus[0] = (nb.exits & kExitWest) ? exits.ghost(0, b, k, up) : u[nb.west];
  st.plus[0] = (nb.exits & kExitEast) ? exits.ghost(1, b, k, up) : u[nb.east];
  st.minus[1] = (nb.exits & kExitSouth) ? exits.ghost(2, b, k, up) : u[nb.south];
  st.plus[1] = (nb.exits & kExitNorth) ? exits.ghost(3, b, k, up) : u[nb.north];
  st.minus[2] = (nb.exits & kExitDown) ? exits.ghost(4, b, k, up) : u[nb.down];
  st.plus[2] = (nb.exits & kExitUp) ? exits.ghost(5, b, k, up) : u[nb.up];
  return st;
}

}  // namespace

ExitFaces ExitFaces::of(const Model& model, int n) {
  ExitFaces f;
  for (int s = 0; s < 2 * model.grid().dim; ++s) {
    f.side[static_cast<std::size_t>(s)] = model.exit_cost(s, n);
  }
  return f;
}

GhostBox ghost_box(DM da) {
  PetscInt gxs = 0, gys = 0, gzs = 0, gxm = 0, gym = 0, gzm = 0;
  FRACMFG_PETSC_CHECK(DMDAGetGhostCorners(da, &gxs, &gys, &gzs, &gxm, &gym, &gzm));
  GhostBox g;
  g.gxs = gxs;
  g.gys = gys;
  g.gxm = gxm;
  g.gym = gym;
  g.gzs = gzs;
  g.gzm = gzm;
  return g;
}

RowIndices::RowIndices(const Model& model, const GhostBox& gb)
    : width_(row_components(model.grid().dim)) {
  ISLocalToGlobalMapping map = nullptr;
  FRACMFG_PETSC_CHECK(DMGetLocalToGlobalMapping(model.dm(), &map));
  const PetscInt n = model.box().count();
  const PetscInt w = width_;
  rows_.resize(static_cast<std::size_t>(w * n));
  cols_.assign(static_cast<std::size_t>(w * n), -1);
  nbs_.resize(static_cast<std::size_t>(n));
  std::vector<PetscInt> local(static_cast<std::size_t>(w * n), -1);
  for_each_point(model.grid(), model.box(), gb, wall_mask(model),
                 [&](PetscInt k, const Neighbours& nb, PetscInt, PetscInt) {
                   PetscInt* l = local.data() + w * k;
                   l[kDiag] = nb.self;
                   if (nb.west != nb.self) l[kWest] = nb.west;
                   if (nb.east != nb.self) l[kEast] = nb.east;
                   if (w >= 5 && nb.south != nb.self) l[kSouth] = nb.south;
                   if (w >= 5 && nb.north != nb.self) l[kNorth] = nb.north;
                   if (w == 7 && nb.down != nb.self) l[kDown] = nb.down;
                   if (w == 7 && nb.up != nb.self) l[kUp] = nb.up;
                   nbs_[static_cast<std::size_t>(k)] = nb;
                 });
  // Negative local indices map to negative global ones.
  FRACMFG_PETSC_CHECK(ISLocalToGlobalMappingApply(map, w * n, local.data(), cols_.data()));
  for (PetscInt k = 0; k < n; ++k) {
    for (PetscInt c = 0; c < w; ++c) {
      rows_[static_cast<std::size_t>(w * k + c)] = cols_[static_cast<std::size_t>(w * k)];
    }
  }
}

MatPtr RowIndices::create_matrix(MPI_Comm comm) const {
  Mat a = nullptr;
  FRACMFG_PETSC_CHECK(MatCreate(comm, &a));
  MatPtr owned(a);
  const auto n = static_cast<PetscInt>(nbs_.size());
  FRACMFG_PETSC_CHECK(MatSetSizes(a, n, n, PETSC_DETERMINE, PETSC_DETERMINE));
  FRACMFG_PETSC_CHECK(MatSetType(a, MATAIJ));
  // PETSc may reorder the index arrays it is given: pass copies.
  std::vector<PetscInt> i = rows_, j = cols_;
  FRACMFG_PETSC_CHECK(
      MatSetPreallocationCOO(a, static_cast<PetscCount>(i.size()), i.data(), j.data()));
  return owned;
}

HamiltonianAtDensity::HamiltonianAtDensity(const Model& model)
    : model_(model), type_(model.problem().hamiltonian.type) {}

void HamiltonianAtDensity::set_density(Vec m) {
  fill(m, false);
}

void HamiltonianAtDensity::set_flux_derivative(Vec m) {
  fill(m, true);
}

void HamiltonianAtDensity::fill(Vec m, bool flux_derivative) {
  if (type_ != Problem::Hamiltonian::Type::congestion) return;
  const Problem::Hamiltonian& h = model_.problem().hamiltonian;
  const std::vector<double>& inv_c = model_.inverse_control_cost();
  coef_.resize(inv_c.size());
  ReadArray a(m);
  for (std::size_t k = 0; k < coef_.size(); ++k) {
    // A mixed (Anderson) iterate may hold round-off below 0: counted as 0.
    const double mk = std::max(a[static_cast<PetscInt>(k)], 0.0);
    const double c = inv_c[k] * congestion_factor(mk, h.epsilon, h.alpha);
    coef_[k] = flux_derivative ? kernels::congestion_flux_factor(c, mk, h.epsilon, h.alpha) : c;
  }
  density_set_ = true;
}

UpwindHamiltonian HamiltonianAtDensity::stencil() const {
  UpwindHamiltonian h;
  h.coef = model_.inverse_control_cost().data();
  if (type_ == Problem::Hamiltonian::Type::power) {
    h.power = true;
    h.exponent = model_.problem().hamiltonian.exponent;
  } else if (type_ == Problem::Hamiltonian::Type::congestion) {
    if (!density_set_) {
      throw Error("mfg: the congestion Hamiltonian needs the density (set_density) before a step");
    }
    h.coef = coef_.data();
  }
  return h;
}

void hjb_residual(const Model& model, const UpwindHamiltonian& ham, const GhostBox& gb,
                  const double* u, const double* u_next, const double* rhs, double* r,
                  const ExitFaces& exits, RowKernels* rk) {
  const WorkScope work(model);
  if (rows_kernel_covers(model)) {
    kernels::HjbRowsCall c = hjb_call(model, ham, row_block(model, gb));
    c.u = u;
    c.u_next = u_next;
    c.rhs = rhs;
    c.residual = r;
    hjb_rows_call(rk, c);
    return;
  }
  // Exits and obstacles: the walk over the points with their folded neighbours, the
  // arithmetic of the row kernels.
  const Grid& g = model.grid();
  const OwnedBox& b = model.box();
  const double inv_dt = 1.0 / model.dt();
  const double nu = model.diffusion();
  const std::array<double, 3> ih = inverse_spacings(g);
  with_dim_and_form(g.dim, ham.power, [&](auto dim, auto power) {
    constexpr int D = decltype(dim)::value;
    constexpr bool P = decltype(power)::value;
    for_each_point(
        g, b, gb, wall_mask(model), [&](PetscInt k, const Neighbours& nb, PetscInt, PetscInt) {
          if (nb.wall) {
            r[k] = u[nb.self] * inv_dt;
            return;
          }
          const kernels::detail::PointStencil st = stencil_at(u, nb, exits, b, k);
          const double norm2 = P ? kernels::detail::stencil_norm2<D>(st, ih.data()) : 0.0;
          r[k] = kernels::detail::point_residual<D, P>(st, ih.data(), ham.coef[k], ham.exponent,
                                                       norm2, u_next[k], rhs[k], inv_dt, nu);
        });
  });
}

void hjb_rows(const Model& model, const UpwindHamiltonian& ham, const GhostBox& gb, const double* u,
              double* rows, const ExitFaces& exits, double* outflow, RowKernels* rk) {
  const WorkScope work(model);
  if (rows_kernel_covers(model)) {
    kernels::HjbRowsCall c = hjb_call(model, ham, row_block(model, gb));
    c.u = u;
    c.rows = rows;
    hjb_rows_call(rk, c);
    if (outflow != nullptr) std::fill(outflow, outflow + model.box().count(), 0.0);
    return;
  }
  // Exits and obstacles: the walk over the points with their folded neighbours, the
  // arithmetic of the row kernels.
  const Grid& g = model.grid();
  const OwnedBox& b = model.box();
  const double inv_dt = 1.0 / model.dt();
  const double nu = model.diffusion();
  const int nc = row_components(g.dim);
  const std::array<double, 3> ih = inverse_spacings(g);
  auto fold = [](const Neighbours& nb, PetscInt n, unsigned bit) {
    if (nb.exits & bit) return Fold::exit;
    return n == nb.self ? Fold::mirror : Fold::none;
  };
  with_dim_and_form(g.dim, ham.power, [&](auto dim, auto power) {
    constexpr int D = decltype(dim)::value;
    constexpr bool P = decltype(power)::value;
    for_each_point(
        g, b, gb, wall_mask(model), [&](PetscInt k, const Neighbours& nb, PetscInt, PetscInt) {
          double* row = rows + k * nc;
          if (nb.wall) {
            for (int c = 0; c < nc; ++c) row[c] = 0.0;
            row[kDiag] = inv_dt;
            if (outflow != nullptr) outflow[k] = 0.0;
            return;
          }
          const kernels::detail::PointStencil st = stencil_at(u, nb, exits, b, k);
          const double norm2 = P ? kernels::detail::stencil_norm2<D>(st, ih.data()) : 0.0;
          const Fold fm[3] = {fold(nb, nb.west, kExitWest), fold(nb, nb.south, kExitSouth),
                              fold(nb, nb.down, kExitDown)};
          const Fold fp[3] = {fold(nb, nb.east, kExitEast), fold(nb, nb.north, kExitNorth),
                              fold(nb, nb.up, kExitUp)};
          double cm[3] = {0.0, 0.0, 0.0}, cp[3] = {0.0, 0.0, 0.0}, rate = 0.0;
          row[kDiag] = kernels::detail::point_row<D>(st, ih.data(), ham.linear(k, norm2), inv_dt,
                                                     nu, fm, fp, cm, cp, rate);
          for (int a = 0; a < D; ++a) {
            row[1 + 2 * a] = cm[a];
            row[2 + 2 * a] = cp[a];
          }
          if (outflow != nullptr) outflow[k] = rate;
        });
  });
}

}  // namespace fracmfg::mfg::detail
