#pragma once
// mfg::Model: a mean field game (mfg::Problem, mfg/problem.hpp) sampled on its grid.
//
// The system on [0, L]^d x [0, T] (d = 1, 2, 3), periodic or reflecting boundaries:
//
//   -u_t - nu Lap u + H(x, grad u) = F(x, m(t)) + f_u(t, x),      u(T) = G(x) + g m(T),
//    m_t - nu Lap m - div(m D_pH(x, grad u)) = f_m(t, x),         m(0) = m0 / mass(m0),
//
// with H(x, p) = |p|^2 / (2 c(x)) (or the power and congestion forms of
// Problem::Hamiltonian, mfg/hamiltonian.hpp) and F(x, m) = strength f(m) + V(x)
// (mfg::Coupling).
//
// Time levels t_n = n dt, dt = T / N_t, n = 0..N_t. The model holds, on this rank's points
// (mfg::OwnedBox of dm()): the control cost c, the potential V, the terminal cost G, the
// initial density m0 normalised to mass 1 (sum m0 * cell volume = 1 over the grid), and the
// sources f_u, f_m at every time level (evaluated once; a source that does not use t is
// stored once, a zero source not at all).
//
// Construction evaluates the problem's fields (mfg::Field) on the grid points, in the order
// c, V, G, m0, f_u, f_m, and checks them (the deck reader samples formulas on a coarse grid
// only): c must be finite and > 0, m0 finite and >= 0 with positive mass, V, G and the
// sources finite, the exit cost finite on the exit faces. Inside an obstacle m0 and f_m are
// set to 0 (no agents there). A violation throws core::CollectiveError (exit code usage) on every
// rank, naming the field (its name: the deck key for a problem from a deck, e.g.
// "mfg.initial_density"; else the Problem member, "problem.initial_density"), the value and
// the point.
//
// Collectivity: the constructor is collective on comm; accessors are not, except where
// stated.

#include <mpi.h>
#include <petscdm.h>
#include <petscvec.h>

#include <memory>
#include <vector>

#include "fracmfg/mfg/grid.hpp"
#include "fracmfg/mfg/problem.hpp"

namespace fracmfg::mfg {

class Model {
 public:
  /// Builds the grid's DMDA (ownership ranges lx, ly, lz as in create_dmda) and samples the
  /// data; keeps a copy of the problem. Collective on comm.
  Model(MPI_Comm comm, const Problem& problem, const std::vector<PetscInt>& lx = {},
        const std::vector<PetscInt>& ly = {}, const std::vector<PetscInt>& lz = {});
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  MPI_Comm comm() const;
  const Problem& problem() const;
  const Grid& grid() const;
  /// The scalar DMDA (dof 1, stencil width 1).
  DM dm() const;
  const OwnedBox& box() const;

  int steps() const;  ///< N_t
  double dt() const;  ///< T / N_t
  double time(int n) const { return dt() * n; }
  double diffusion() const;  ///< nu
  /// s of nu (-Lap)^(s/2), in (1, 2]; 2: the Laplacian (mfg/fractional_diffusion.hpp).
  double diffusion_order() const;

  /// x, y and z of the owned points, in local order (y = 0 in 1D, z = 0 below 3D).
  const std::vector<double>& x() const;
  const std::vector<double>& y() const;
  const std::vector<double>& z() const;
  /// 1 / c at the owned points.
  const std::vector<double>& inverse_control_cost() const;

  Vec potential() const;        ///< V (at t = 0)
  Vec terminal_cost() const;    ///< G
  Vec initial_density() const;  ///< m0, normalised to mass 1
  double terminal_coupling() const;

  /// f_u(t_n, .) at the owned points; nullptr when the source is zero.
  const double* hjb_source(int n) const;
  /// f_m(t_n, .) at the owned points; nullptr when the source is zero.
  const double* fp_source(int n) const;
  /// The Fokker-Planck equation has a source f_m (not zero). The same on every rank.
  bool has_fp_source() const;

  /// V(t_n) at the owned points (V(0) when the potential does not depend on t).
  const double* potential_values(int n) const;

  /// An obstacle is given (Problem::obstacle is not zero).
  bool has_obstacle() const;
  /// 1 at the owned points inside the obstacle (O > 0), else 0; empty without an obstacle.
  const std::vector<unsigned char>& wall() const;
  /// The same on the ghosted box of dm() (a local Vec's layout; 0 at ghost slots outside
  /// the domain); empty without an obstacle.
  const std::vector<unsigned char>& wall_ghosted() const;
  /// The exit cost g(t_n) at the owned faces of side `side` (axis * 2 + end) when it is an
  /// exit and this rank owns points along it, indexed by the face's offset in the owned box
  /// with the side's axis left out, x fastest (x sides (l - zs) ym + (j - ys), y sides
  /// (l - zs) xm + (i - xs), z sides (j - ys) xm + (i - xs); detail::ExitFaces); nullptr
  /// otherwise.
  const double* exit_cost(int side, int n) const;

  /// sum_i v_i * cell volume. Collective.
  double mass(Vec v) const;

  /// CPU time [s] of the calling thread spent so far in this model's local grid loops (the
  /// HJB residual and Jacobian rows, the Fokker-Planck rows): work that scales with the
  /// owned points and involves no communication, which the load balance compares between
  /// ranks (mfg/solver.hpp). add_work() is called by those loops, only while
  /// work_accounting() is on (off by default: reading a thread's CPU clock is a system call,
  /// slow in a virtual machine, twice per loop call). Not collective.
  double work_seconds() const;
  void add_work(double seconds) const;
  bool work_accounting() const;
  /// The load balance switches the accounting on for the model it observes.
  void set_work_accounting(bool on);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::mfg
