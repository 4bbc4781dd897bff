#pragma once
// The upwind finite-difference stencil shared by the HJB solver and the Fokker-Planck
// solver: a walk over the owned points with the ghosted indices of their neighbours
// (mirrored onto the point itself at reflecting walls), the HJB residual, and the rows of
// the HJB Jacobian J = I/dt + L(u) (L: -nu Lap + the linearised numerical Hamiltonian).
#include <petscdm.h>
#include <petscdmda.h>

#include <array>
#include <vector>

#include "fracmfg/mfg/grid.hpp"
#include "fracmfg/mfg/hamiltonian.hpp"
#include "fracmfg/mfg/model.hpp"
#include "kernels/mfg_rows_item.hpp"
#include "mfg/petsc_handles.hpp"

namespace fracmfg::mfg::detail {

class RowKernels;  // mfg/row_kernels.hpp

/// The ghosted box of a DMDA: local index of (i, j, l) is
/// ((l - gzs) gym + (j - gys)) gxm + (i - gxs) (gzs = 0, gzm = 1 below 3D).
struct GhostBox {
  PetscInt gxs = 0, gys = 0, gxm = 0, gym = 1;
  PetscInt gzs = 0, gzm = 1;
};
GhostBox ghost_box(DM da);

/// Bits of Neighbours::exits: the neighbour on that side lies beyond an exit face.
inline constexpr unsigned kExitWest = 1U, kExitEast = 2U, kExitSouth = 4U, kExitNorth = 8U,
                          kExitDown = 16U, kExitUp = 32U;

/// Ghosted indices of a point and its neighbours: west/east along x, south/north along y,
/// down/up along z (the point itself beyond the grid's dimension). At a reflecting wall, at
/// an obstacle point and at an exit the missing neighbour is the point itself (at a wall: the
/// mirror across the cell face); `exits` marks the exits, whose ghost value the HJB sets to
/// 2 g - u. An obstacle point has itself as every neighbour (its row is decoupled).
struct Neighbours {
  PetscInt self, west, east, south, north, down, up;
  unsigned exits = 0;  ///< kExit* bits
  bool wall = false;   ///< the point is inside an obstacle
};

/// Calls f(k, nb, i, j) for each owned point (i, j, l): k its owned (global Vec) index. wall:
/// the obstacle mask on the ghosted box (Model::wall_ghosted()), or nullptr for none.
template <class F>
void for_each_point(const Grid& g, const OwnedBox& b, const GhostBox& gb, const unsigned char* wall,
                    F&& f) {
  const PetscInt nx = g.points[0];
  const PetscInt ny = g.points[1];
  const PetscInt nz = g.points[2];
  const bool two_d = g.dim >= 2;
  const bool three_d = g.dim == 3;
  const PetscInt plane = gb.gxm * gb.gym;  // ghosted stride of z
  const Boundary sw = g.side(0, 0), se = g.side(0, 1);
  const Boundary ss = two_d ? g.side(1, 0) : Boundary::periodic;
  const Boundary sn = two_d ? g.side(1, 1) : Boundary::periodic;
  const Boundary sd = three_d ? g.side(2, 0) : Boundary::periodic;
  const Boundary su = three_d ? g.side(2, 1) : Boundary::periodic;
  for (PetscInt l = b.zs; l < b.zs + b.zm; ++l) {
    for (PetscInt j = b.ys; j < b.ys + b.ym; ++j) {
      for (PetscInt i = b.xs; i < b.xs + b.xm; ++i) {
        const PetscInt k = ((l - b.zs) * b.ym + (j - b.ys)) * b.xm + (i - b.xs);
        Neighbours nb;
        nb.self = ((l - gb.gzs) * gb.gym + (j - gb.gys)) * gb.gxm + (i - gb.gxs);
        nb.west = nb.self - 1;
        nb.east = nb.self + 1;
        // A side that is not periodic: the neighbour folds onto the point (exits marked).
        auto side = [&](Boundary b_side, PetscInt& n, unsigned bit) {
          n = nb.self;
          if (b_side == Boundary::exit) nb.exits |= bit;
        };
        if (i == 0 && sw != Boundary::periodic) side(sw, nb.west, kExitWest);
        if (i == nx - 1 && se != Boundary::periodic) side(se, nb.east, kExitEast);
        if (two_d) {
          nb.south = nb.self - gb.gxm;
          nb.north = nb.self + gb.gxm;
          if (j == 0 && ss != Boundary::periodic) side(ss, nb.south, kExitSouth);
          if (j == ny - 1 && sn != Boundary::periodic) side(sn, nb.north, kExitNorth);
        } else {
          nb.south = nb.north = nb.self;
        }
        if (three_d) {
          nb.down = nb.self - plane;
          nb.up = nb.self + plane;
          if (l == 0 && sd != Boundary::periodic) side(sd, nb.down, kExitDown);
          if (l == nz - 1 && su != Boundary::periodic) side(su, nb.up, kExitUp);
        } else {
          nb.down = nb.up = nb.self;
        }
        if (wall != nullptr) {
          if (wall[nb.self] != 0) {
            nb.wall = true;
            nb.exits = 0;
            nb.west = nb.east = nb.south = nb.north = nb.down = nb.up = nb.self;
          } else {
            for (PetscInt* n : {&nb.west, &nb.east, &nb.south, &nb.north, &nb.down, &nb.up}) {
              if (wall[*n] != 0) *n = nb.self;
            }
          }
        }
        f(k, nb, i, j);
      }
    }
  }
}

/// The exit cost of one time level at the owned exit faces (Model::exit_cost(side, n)):
/// per side axis * 2 + end, indexed by the face's offset in the owned box with the side's
/// axis left out (x fastest); null where none.
struct ExitFaces {
  std::array<const double*, io::MfgConfig::Domain::kMaxSides> side{};
  /// The faces of a model's exit sides at time level n.
  static ExitFaces of(const Model& model, int n);
  /// The offset on side s of owned point k (k = ((l - zs) ym + (j - ys)) xm + (i - xs)):
  /// x sides (l - zs) ym + (j - ys), y sides (l - zs) xm + (i - xs), z sides
  /// (j - ys) xm + (i - xs).
  static PetscInt face_offset(int s, const OwnedBox& b, PetscInt k) {
    const PetscInt plane = b.xm * b.ym;
    if (s < 2) return k / b.xm;
    if (s < 4) return (k / plane) * b.xm + k % b.xm;
    return k % plane;
  }
  /// The ghost value beyond the face of owned point k on side s: 2 g - u.
  double ghost(int s, const OwnedBox& b, PetscInt k, double u) const {
    return 2.0 * side[static_cast<std::size_t>(s)][face_offset(s, b, k)] - u;
  }
};

/// Components of a Jacobian row in the coefficient layout:
/// [diag, west, east(, south, north(, down, up))].
/// Neighbours mirrored onto the point are folded into diag and stored as 0.
inline constexpr int kDiag = 0, kWest = 1, kEast = 2, kSouth = 3, kNorth = 4, kDown = 5, kUp = 6;
inline int row_components(int dim) {
  return 1 + 2 * dim;
}

/// The global (PETSc) column indices of every owned point's row of the 3-point (1D),
/// 5-point (2D) or 7-point (3D) operators, in the order [self, west, east(, south, north(,
/// down, up))] of the row
/// layout above, computed once from the DMDA's local-to-global mapping. A neighbour that a
/// reflecting wall folds into the diagonal has column -1. create_matrix() builds an AIJ
/// matrix with exactly this pattern (PETSc's COO assembly), so that a whole matrix is set
/// by one MatSetValuesCOO call with the values in row layout.
class RowIndices {
 public:
  RowIndices(const Model& model, const GhostBox& gb);
  /// Entries per row: row_components(dim).
  int width() const { return width_; }
  /// Ghosted neighbour indices of owned point k (for reading coefficient arrays).
  const Neighbours& neighbours(PetscInt k) const { return nbs_[static_cast<std::size_t>(k)]; }
  PetscInt count() const { return static_cast<PetscInt>(nbs_.size()); }
  /// A new AIJ matrix on the model's communicator with this pattern (collective).
  MatPtr create_matrix(MPI_Comm comm) const;

 private:
  int width_ = 3;
  std::vector<PetscInt> rows_, cols_;  // COO: width_ entries per owned point
  std::vector<Neighbours> nbs_;
};

/// The numerical Hamiltonian of mfg/hamiltonian.hpp as the stencil sees it, at a fixed
/// density: coef[k] at owned point k is 1/c (congestion: 1 / (c (epsilon + m)^alpha)); the
/// power form is H_h = coef s^(q/2) / q, the others the quadratic form with coef.
struct UpwindHamiltonian {
  const double* coef = nullptr;
  bool power = false;
  double exponent = 2.0;
  /// H_h at point k from the one-sided differences of each axis (dy+ = dy- = 0 in 1D,
  /// dz+ = dz- = 0 below 3D).
  double value(PetscInt k, double dxp, double dxm, double dyp, double dym, double dzp = 0.0,
               double dzm = 0.0) const {
    if (!power)
      return upwind_hamiltonian(dxp, dxm, coef[k]) + upwind_hamiltonian(dyp, dym, coef[k]) +
             upwind_hamiltonian(dzp, dzm, coef[k]);
    return power_hamiltonian(
        upwind_norm2(dxp, dxm) + upwind_norm2(dyp, dym) + upwind_norm2(dzp, dzm), coef[k],
        exponent);
  }
  /// The coefficient of the linearisation at point k (1/c of upwind_axis_row), s the squared
  /// upwind norm there (unused unless power).
  double linear(PetscInt k, double s) const {
    return power ? coef[k] * power_weight(s, exponent) : coef[k];
  }
};

/// The model's Hamiltonian at the density of set_density(): per-point coefficients for
/// UpwindHamiltonian. Not collective.
class HamiltonianAtDensity {
 public:
  explicit HamiltonianAtDensity(const Model& model);
  /// congestion: the coefficients 1 / (c (epsilon + m)^alpha) at m's owned values (a global
  /// Vec of model.dm(), m >= 0); the other forms do not depend on m.
  void set_density(Vec m);
  /// congestion: the coefficients d(m c(m))/dm = c(m) + c'(m) m = (epsilon + (1 - alpha) m) /
  /// (c (epsilon + m)^(alpha + 1)) at m's owned values: those of the Jacobian in m of the
  /// Fokker-Planck step whose drift is evaluated at the density it computes (negative where
  /// alpha > 1 and m > epsilon / (alpha - 1)). The other forms: no effect. Not collective.
  void set_flux_derivative(Vec m);
  /// The stencil's view. Throws Error for the congestion form before set_density().
  UpwindHamiltonian stencil() const;
  /// True unless the form is quadratic (the coefficient of the linearisation is not 1/c).
  bool general() const { return type_ != Problem::Hamiltonian::Type::quadratic; }

 private:
  // The coefficients at m: c(m), or c(m) + c'(m) m (flux_derivative).
  void fill(Vec m, bool flux_derivative);

  const Model& model_;
  Problem::Hamiltonian::Type type_;
  std::vector<double> coef_;  // congestion
  bool density_set_ = false;
};

/// r_k = (u_k - u_next_k)/dt - nu Lap_h u_k + H_h(x_k, D+u, D-u) - rhs_k at the owned
/// points; u is ghosted (ghosts filled), u_next, rhs and r are owned arrays. exits: the exit
/// cost of the step's time level (none needed without exit sides). Inside an obstacle
/// r_k = u_k / dt (u = 0 there, decoupled). Without exits and obstacles the kernel
/// mfg_hjb_rows computes it where rk places it (null: the host kernel).
void hjb_residual(const Model& model, const UpwindHamiltonian& ham, const GhostBox& gb,
                  const double* u, const double* u_next, const double* rhs, double* r,
                  const ExitFaces& exits = {}, RowKernels* rk = nullptr);

/// How a neighbour enters a Jacobian row, and the row arithmetic of one axis: the one copy
/// in kernels/mfg_rows_item.hpp, shared with the row kernels (kernels/mfg_rows.hpp).
using kernels::detail::Fold;
using kernels::detail::fold_into_diag;
using kernels::detail::upwind_axis_row;

/// The rows of J(u) = I/dt + L(u) at the owned points, row_components(dim) values each, in
/// the layout above; u is ghosted; exits as for hjb_residual. outflow (optional, owned): the
/// exit rate of each point, (L 1)_k, nonzero only next to exits. Obstacle points: the row
/// I/dt. Without exits and obstacles the kernel mfg_hjb_rows computes the rows where rk
/// places it (null: the host kernel).
void hjb_rows(const Model& model, const UpwindHamiltonian& ham, const GhostBox& gb, const double* u,
              double* rows, const ExitFaces& exits = {}, double* outflow = nullptr,
              RowKernels* rk = nullptr);

}  // namespace fracmfg::mfg::detail
