#pragma once
// Per-point bodies of kernels::mfg_hjb_rows and kernels::mfg_fp_rows (the mean field game
// finite-difference rows, fracmfg/kernels/mfg_rows.hpp), shared by the host loop and the CUDA
// launch, and the one copy of the row arithmetic that mfg/stencil.hpp uses for the
// configurations the kernels do not cover (exits, obstacles). The numerical Hamiltonian's
// formulas are fracmfg/kernels/upwind_hamiltonian.hpp (documented in mfg/hamiltonian.hpp). Plain
// arrays and parameter structs only: no PETSc, MPI or Kokkos.
#include <cstdint>
#include <type_traits>

#include "fracmfg/kernels/host_device.hpp"
#include "fracmfg/kernels/mfg_rows.hpp"
#include "fracmfg/kernels/upwind_hamiltonian.hpp"

namespace fracmfg::kernels::detail {

/// How a neighbour enters a Jacobian row: a grid point, the point itself (mirror at a
/// wall: u_ghost = u), or an exit ghost (u_ghost = 2 g - u).
enum class Fold : unsigned char { none, mirror, exit };

/// Folds a row's coefficient c on a neighbour that is not a grid point into diag (see
/// upwind_axis_row).
FRACMFG_HOST_DEVICE inline void fold_into_diag(Fold fold, double& diag, double& c,
                                               double& outflow) {
  if (fold == Fold::none) return;
  if (fold == Fold::mirror) {
    diag += c;
  } else {
    // The row loses the coefficient c and its diagonal gains -c: the row sum grows by -2c.
    diag -= c;
    outflow -= 2.0 * c;
  }
  c = 0.0;
}

/// One axis of a row of J(u) at a point with value up and neighbours uminus, uplus (spacing
/// 1/ih, diffusion nu, ic = 1/c; at an exit the ghost value): the coefficients on the minus
/// and plus neighbours, and the axis' part added to diag; a folded neighbour is folded into
/// diag (d u_ghost / d u = +1 mirrored, -1 at an exit) and its coefficient set to 0. At an
/// exit, -2c (>= 0, c the coefficient before folding: the growth of the row sum) is added to
/// `outflow`: the rate at which the adjoint (Fokker-Planck) step lets mass leave through that
/// face.
FRACMFG_HOST_DEVICE inline void upwind_axis_row(double up, double uminus, double uplus, double ih,
                                                double nu, double ic, Fold fold_minus,
                                                Fold fold_plus, double& diag, double& cminus,
                                                double& cplus, double& outflow) {
  const double ap = upwind_a_plus((uplus - up) * ih, ic);
  const double am = upwind_a_minus((up - uminus) * ih, ic);
  const double lap = nu * ih * ih;
  cplus = -lap + ap * ih;
  cminus = -lap - am * ih;
  diag += 2.0 * lap + (am - ap) * ih;
  fold_into_diag(fold_plus, diag, cplus, outflow);
  fold_into_diag(fold_minus, diag, cminus, outflow);
}

/// A point's value and its neighbours along each axis (unused axes hold the point's value),
/// with the sides where the neighbour is the point mirrored across a reflecting wall.
struct PointStencil {
  double up;
  double minus[3], plus[3];
  bool wall_minus[3], wall_plus[3];
};

/// The stencil of the owned point (i, j, l) (offsets in the owned box) from the layout of
/// b: the ghosted box, or (Owned1d) the owned values with the block's two ghosts. Interior
/// (Owned1d only): 0 < i < size - 1, so that neither a ghost nor a wall is near (the host
/// loop peels the first and the last point off).
template <int Dim, bool Owned1d, bool Interior = false>
FRACMFG_HOST_DEVICE inline PointStencil gather(const MfgBlock& b, const double* u, std::int64_t i,
                                               std::int64_t j, std::int64_t l) {
  PointStencil s{};
  if (Owned1d && Interior) {
    s.up = u[i];
    s.minus[0] = u[i - 1];
    s.plus[0] = u[i + 1];
    s.wall_minus[0] = s.wall_plus[0] = false;
  } else if (Owned1d) {
    s.up = u[i];
    s.minus[0] = i > 0 ? u[i - 1] : b.ghost_west;
    s.plus[0] = i + 1 < b.size[0] ? u[i + 1] : b.ghost_east;
    s.wall_minus[0] = i == 0 && b.start[0] == 0 && b.mirror[0];
    s.wall_plus[0] = i + 1 == b.size[0] && b.start[0] + b.size[0] == b.points[0] && b.mirror[1];
  } else {
    const std::int64_t gi = b.start[0] + i, gj = b.start[1] + j, gl = b.start[2] + l;
    const std::int64_t sx = b.ghost_size[0], sy = b.ghost_size[1];
    const std::int64_t self =
        ((gl - b.ghost_start[2]) * sy + (gj - b.ghost_start[1])) * sx + (gi - b.ghost_start[0]);
    s.up = u[self];
    s.wall_minus[0] = gi == 0 && b.mirror[0];
    s.wall_plus[0] = gi == b.points[0] - 1 && b.mirror[1];
    s.minus[0] = s.wall_minus[0] ? s.up : u[self - 1];
    s.plus[0] = s.wall_plus[0] ? s.up : u[self + 1];
    if (Dim >= 2) {
      s.wall_minus[1] = gj == 0 && b.mirror[2];
      s.wall_plus[1] = gj == b.points[1] - 1 && b.mirror[3];
      s.minus[1] = s.wall_minus[1] ? s.up : u[self - sx];
      s.plus[1] = s.wall_plus[1] ? s.up : u[self + sx];
    }
    if (Dim == 3) {
      const std::int64_t plane = sx * sy;
      s.wall_minus[2] = gl == 0 && b.mirror[4];
      s.wall_plus[2] = gl == b.points[2] - 1 && b.mirror[5];
      s.minus[2] = s.wall_minus[2] ? s.up : u[self - plane];
      s.plus[2] = s.wall_plus[2] ? s.up : u[self + plane];
    }
  }
  return s;
}

FRACMFG_HOST_DEVICE inline Fold wall_fold(bool wall) {
  return wall ? Fold::mirror : Fold::none;
}

/// The squared upwind norm of a point's stencil (s of the power form), axis by axis.
template <int Dim>
FRACMFG_HOST_DEVICE inline double stencil_norm2(const PointStencil& s, const double* ih) {
  const double up = s.up;
  double norm2 = upwind_norm2((s.plus[0] - up) * ih[0], (up - s.minus[0]) * ih[0]);
  if (Dim >= 2) norm2 += upwind_norm2((s.plus[1] - up) * ih[1], (up - s.minus[1]) * ih[1]);
  if (Dim == 3) norm2 += upwind_norm2((s.plus[2] - up) * ih[2], (up - s.minus[2]) * ih[2]);
  return norm2;
}

/// The HJB residual at a point, (u - u_next)/dt - nu Lap_h u + H_h - rhs, from its stencil:
/// the power form coef norm2^(q/2) / q (norm2 from stencil_norm2), else the quadratic form
/// with coefficient coef.
template <int Dim, bool Power>
FRACMFG_HOST_DEVICE inline double point_residual(const PointStencil& s, const double* ih,
                                                 double coef, double exponent, double norm2,
                                                 double u_next, double rhs, double inv_dt,
                                                 double nu) {
  const double up = s.up;
  double lap = (s.plus[0] - 2.0 * up + s.minus[0]) * ih[0] * ih[0];
  if (Dim >= 2) lap += (s.plus[1] - 2.0 * up + s.minus[1]) * ih[1] * ih[1];
  if (Dim == 3) lap += (s.plus[2] - 2.0 * up + s.minus[2]) * ih[2] * ih[2];
  double h = 0.0;
  if (Power) {
    h = power_hamiltonian(norm2, coef, exponent);
  } else {
    h = upwind_hamiltonian((s.plus[0] - up) * ih[0], (up - s.minus[0]) * ih[0], coef);
    if (Dim >= 2)
      h += upwind_hamiltonian((s.plus[1] - up) * ih[1], (up - s.minus[1]) * ih[1], coef);
    if (Dim == 3)
      h += upwind_hamiltonian((s.plus[2] - up) * ih[2], (up - s.minus[2]) * ih[2], coef);
  }
  return (up - u_next) * inv_dt - nu * lap + h - rhs;
}

/// The row of J(u) = I/dt + L(u) at a point from its stencil: the coefficients on the minus
/// and plus neighbours of each axis (cm, cp) and the diagonal (returned); ic the coefficient
/// of the linearisation (1/c, or w/c for the power form), folds per side as upwind_axis_row.
template <int Dim>
FRACMFG_HOST_DEVICE inline double point_row(const PointStencil& s, const double* ih, double ic,
                                            double inv_dt, double nu, const Fold* fold_minus,
                                            const Fold* fold_plus, double* cm, double* cp,
                                            double& outflow) {
  double diag = inv_dt;
  for (int a = 0; a < Dim; ++a) {
    upwind_axis_row(s.up, s.minus[a], s.plus[a], ih[a], nu, ic, fold_minus[a], fold_plus[a], diag,
                    cm[a], cp[a], outflow);
  }
  return diag;
}

/// The HJB residual and/or Jacobian row of owned point (i, j, l), k = (l ym + j) xm + i; the
/// residual's square (0 without Residual).
template <int Dim, bool Owned1d, bool Power, bool Residual, bool Rows, bool Interior = false>
FRACMFG_HOST_DEVICE inline double hjb_rows_item(const HjbRowsCall& c, std::int64_t i,
                                                std::int64_t j, std::int64_t l) {
  const MfgBlock& b = c.block;
  const std::int64_t k = (l * b.size[1] + j) * b.size[0] + i;
  const PointStencil s = gather<Dim, Owned1d, Interior>(b, c.u, i, j, l);
  const double* ih = b.inv_h;
  const double coef = c.coef[k];
  const double norm2 = Power ? stencil_norm2<Dim>(s, ih) : 0.0;
  double square = 0.0;
  if (Residual) {
    const double res = point_residual<Dim, Power>(s, ih, coef, c.exponent, norm2, c.u_next[k],
                                                  c.rhs[k], c.inv_dt, c.nu);
    c.residual[k] = res;
    square = res * res;
  }
  if (Rows) {
    const double ic = Power ? coef * power_weight(norm2, c.exponent) : coef;
    Fold fm[3], fp[3];
    for (int a = 0; a < Dim; ++a) {
      fm[a] = wall_fold(s.wall_minus[a]);
      fp[a] = wall_fold(s.wall_plus[a]);
    }
    double cm[3] = {0.0, 0.0, 0.0}, cp[3] = {0.0, 0.0, 0.0}, outflow = 0.0;
    const double diag = point_row<Dim>(s, ih, ic, c.inv_dt, c.nu, fm, fp, cm, cp, outflow);
    if (Owned1d) {
      c.sub[k] = cm[0];
      c.diag[k] = diag;
      c.super[k] = cp[0];
    } else {
      double* row = c.rows + k * (1 + 2 * Dim);
      row[0] = diag;
      for (int a = 0; a < Dim; ++a) {
        row[1 + 2 * a] = cm[a];
        row[2 + 2 * a] = cp[a];
      }
    }
  }
  return square;
}

/// The Fokker-Planck rows of owned point k of a 1D block (the arithmetic of
/// mfg::detail::fp_rows_1d): J(k, k) with the mirrored neighbours folded in, J(k-1, k) from
/// the west neighbour's coefficient, J(k+1, k) from the east one's.
template <bool Interior = false>
FRACMFG_HOST_DEVICE inline void fp_rows_item(const FpRowsCall& c, std::int64_t k) {
  const MfgBlock& b = c.block;
  const PointStencil s = gather<1, true, Interior>(b, c.u, k, 0, 0);
  const std::int64_t n = b.size[0];
  const double ih = b.inv_h[0];
  const double lap = c.nu * ih * ih;
  const double dplus = (s.plus[0] - s.up) * ih, dminus = (s.up - s.minus[0]) * ih;
  const double ic_w = Interior || k > 0 ? c.inv_c[k - 1] : c.inv_c_west;
  const double ic_e = Interior || k + 1 < n ? c.inv_c[k + 1] : c.inv_c_east;
  // J(q, q), with the mirrored neighbours folded in (their a+/a- vanish: zero difference).
  const double ap = upwind_a_plus(dplus, c.inv_c[k]);
  const double am = upwind_a_minus(dminus, c.inv_c[k]);
  double d = c.inv_dt + 2.0 * lap + (am - ap) * ih;
  if (s.wall_minus[0]) d -= lap;
  if (s.wall_plus[0]) d -= lap;
  c.diag[k] = d;
  // J(q-1, q): the east coefficient of row q-1, whose D+ is this point's D-.
  c.sub[k] = s.wall_minus[0] ? 0.0 : -lap + upwind_a_plus(dminus, ic_w) * ih;
  // J(q+1, q): the west coefficient of row q+1, whose D- is this point's D+.
  c.super[k] = s.wall_plus[0] ? 0.0 : -lap - upwind_a_minus(dplus, ic_e) * ih;
}

/// The template arguments of one HJB call.
template <int D, bool O, bool P, bool R, bool W>
struct HjbKind {
  static constexpr int dim = D;
  static constexpr bool owned_1d = O, power = P, residual = R, rows = W;
};

/// Calls f(HjbKind<...>{}) for the call's configuration (residual and/or rows: at least
/// one; check_hjb_rows ensures it).
template <class F>
inline void hjb_kind(const HjbRowsCall& c, F&& f) {
  const bool res = c.residual != nullptr;
  const bool rows = c.rows != nullptr || c.diag != nullptr;
  auto outputs = [&](auto dim, auto owned, auto power) {
    constexpr int D = decltype(dim)::value;
    constexpr bool O = decltype(owned)::value, P = decltype(power)::value;
    if (res && rows) {
      f(HjbKind<D, O, P, true, true>{});
    } else if (res) {
      f(HjbKind<D, O, P, true, false>{});
    } else {
      f(HjbKind<D, O, P, false, true>{});
    }
  };
  auto with_power = [&](auto dim, auto owned) {
    if (c.power) {
      outputs(dim, owned, std::true_type{});
    } else {
      outputs(dim, owned, std::false_type{});
    }
  };
  if (c.block.dim == 1) {
    if (c.block.owned_1d) {
      with_power(std::integral_constant<int, 1>{}, std::true_type{});
    } else {
      with_power(std::integral_constant<int, 1>{}, std::false_type{});
    }
  } else if (c.block.dim == 2) {
    with_power(std::integral_constant<int, 2>{}, std::false_type{});
  } else {
    with_power(std::integral_constant<int, 3>{}, std::false_type{});
  }
}

}  // namespace fracmfg::kernels::detail
