#pragma once
// frac::FpdeGrid: the finite-difference grid of a fractional PDE on [0, Lx] (x [0, Ly]),
// distributed as a PETSc DMDA (dof 1, star stencil of width 1), and the values of functions
// (frac/fpde_problem.hpp) or deck expressions at the points a rank owns.
//
//   frac::FpdeGrid grid(comm, problem.domain, problem.grid);   // collective
//   std::vector<double> f(grid.local_size());
//   grid.evaluate(problem.source, t, f.data());                // f(x, y, t) at the owned points
//
// Points: N_d per direction (config.grid.points). Dirichlet and Neumann: x_i = i h,
// h = L / (N - 1), i = 0..N-1 (the boundary points are grid points). Periodic: x_i = i h,
// h = L / N, i = 0..N-1 (x = L is the point x = 0). Owned points are numbered x fastest
// within the rank's box, the order of VecGetArray on a global vector of dm().
// Collective: the constructor and create_companion (on the communicator); the rest is
// local.

#include <mpi.h>
#include <petscdm.h>

#include <array>
#include <cstddef>
#include <vector>

#include "fracmfg/core/expression.hpp"
#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/io/config.hpp"
#include "fracmfg/io/h5_layout.hpp"
#include "fracmfg/la/petsc_handles.hpp"

namespace fracmfg::frac {

class FpdeGrid {
 public:
  /// Bits of boundary(): on which sides of the domain an owned point lies.
  enum Side : unsigned { x_low = 1u, x_high = 2u, y_low = 4u, y_high = 8u };

  /// Builds the DMDA of a domain (one or two lengths, the boundary kind) and its points per
  /// direction (1D or 2D). Collective.
  FpdeGrid(MPI_Comm comm, const io::FpdeConfig::Domain& domain, const io::FpdeConfig::Grid& grid);
  /// The grid of config.domain and config.grid. Collective.
  FpdeGrid(MPI_Comm comm, const io::FpdeConfig& config);
  /// The grid `like` (same communicator, points and process grid) with the ownership ranges
  /// lx (x points per rank column, sum points(0)) and, in 2D, ly (y points per rank row, sum
  /// points(1)): a load-balance re-split (exec::create_dmda_like). Collective; Error for
  /// ranges that do not fit.
  FpdeGrid(const FpdeGrid& like, const std::vector<PetscInt>& lx, const std::vector<PetscInt>& ly);
  FpdeGrid(FpdeGrid&&) noexcept = default;
  FpdeGrid& operator=(FpdeGrid&&) noexcept = default;
  FpdeGrid(const FpdeGrid&) = delete;
  FpdeGrid& operator=(const FpdeGrid&) = delete;

  DM dm() const { return dm_; }
  MPI_Comm comm() const { return comm_; }
  int dimension() const { return dim_; }
  io::FpdeConfig::Domain::Boundary boundary_kind() const { return kind_; }
  bool periodic() const { return kind_ == io::FpdeConfig::Domain::Boundary::periodic; }
  /// Points N_d and spacing h_d in direction d (d = 0: x, 1: y; 1 point and 0 beyond dim).
  PetscInt points(int d) const { return n_[static_cast<std::size_t>(d)]; }
  double spacing(int d) const { return h_[static_cast<std::size_t>(d)]; }
  PetscInt global_size() const { return n_[0] * n_[1]; }
  /// Origin 0 and spacing h, for the XDMF description of a field.
  io::UniformGrid geometry() const;

  /// The owned box: first index and count per direction.
  PetscInt begin(int d) const { return start_[static_cast<std::size_t>(d)]; }
  PetscInt count(int d) const { return width_[static_cast<std::size_t>(d)]; }
  std::size_t local_size() const { return x_.size(); }
  /// Coordinates of the owned points (y: zeros in 1D).
  const std::vector<double>& x() const { return x_; }
  const std::vector<double>& y() const { return y_; }
  /// Side bits per owned point (0 for interior points and for every point when periodic).
  const std::vector<unsigned>& boundary() const { return side_; }

  /// out[p] = expr at owned point p and time t. The expression's variables must be among
  /// x, y, t and u (u: values u[p], required when the expression uses u); fracmfg::Error
  /// otherwise.
  void evaluate(const core::Expression& expr, double t, const double* u, double* out) const;
  /// expr at arbitrary points (xs[k], ys[k]), k < n, time t (variables x, y, t only).
  static void evaluate_at(const core::Expression& expr, double t, std::size_t n, const double* xs,
                          const double* ys, double* out);

  /// out[p] = f(x_p, y_p, t) at owned point p (0 when f is empty).
  void evaluate(const FpdeFunction& f, double t, double* out) const;
  /// out[p] = f(x_p, y_p, t, u[p]) at owned point p (0 when f is empty).
  void evaluate(const FpdeSourceFunction& f, double t, const double* u, double* out) const;
  /// f at arbitrary points (xs[k], ys[k]), k < n, time t (0 when f is empty).
  static void evaluate_at(const FpdeFunction& f, double t, std::size_t n, const double* xs,
                          const double* ys, double* out);

  /// A DMDA of the same sizes and decomposition with `dof` components per point (for
  /// multi-component data such as the history state of a checkpoint). Collective.
  la::DmHandle create_companion(PetscInt dof) const;
  /// Points owned by each rank column (direction 0, PETSc's lx) or row (1, ly; {1} in 1D).
  std::vector<PetscInt> ownership(int direction) const;

 private:
  /// The owned box, coordinates and boundary sides from dm_.
  void set_points();

  MPI_Comm comm_;
  int dim_;
  io::FpdeConfig::Domain::Boundary kind_;
  std::array<PetscInt, 2> n_{1, 1};
  std::array<double, 2> h_{0.0, 0.0};
  std::array<PetscInt, 2> start_{0, 0};
  std::array<PetscInt, 2> width_{1, 1};
  la::DmHandle dm_;
  std::vector<double> x_;
  std::vector<double> y_;
  std::vector<unsigned> side_;
};

}  // namespace fracmfg::frac
