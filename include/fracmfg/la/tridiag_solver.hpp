#pragma once
// la::TridiagSolver: exact solution of a tridiagonal (optionally cyclic) linear system whose
// rows are distributed over the ranks of a communicator in contiguous blocks (rank 0 owns the
// first rows, then rank 1, ..., as a 1D DMDA with dof 1 lays them out). It is what the PETSc
// preconditioner "fracmfg_tridiag" applies (tridiag_pc.hpp); solvers may also call it
// directly, without a KSP.
//
//   la::TridiagSolver solver(comm);
//   solver.setup(n_local, sub, diag, super, /*periodic=*/true);   // collective
//   solver.solve(b, x);                                           // collective, exact
//   solver.setup(n_local, sub2, diag2, super2, true);             // new values, same memory
//
// System: on global rows i = 0 .. N-1 (N = sum of n_local over ranks),
//     sub[i] x[i-1] + diag[i] x[i] + super[i] x[i+1] = b[i],
// where each rank passes its own rows (local index i - first_row()). Non-periodic: sub of
// global row 0 and super of global row N-1 are ignored. Periodic (cyclic): x[-1] means
// x[N-1] and x[N] means x[0]; for N <= 2 coefficients of the same unknown add up.
// A rank may own no rows.
//
// Method (partition method / substructuring, e.g. H. H. Wang, ACM TOMS 7 (1981) 170-183;
// here with the block end points as interface unknowns):
//  1. setup, per rank: the rows strictly inside the block are factored by Thomas' algorithm
//     (T = L U) and each interior unknown is written as y + alpha x_first + beta x_last
//     (the "spikes" alpha and beta depend on the matrix only). Eliminating the interior
//     leaves, for each rank, at most two rows (first and last of the block) coupling only
//     interface unknowns: together a tridiagonal system of size R <= 2p (cyclic when
//     periodic), gathered once at setup (MPI_Allgather) and factored redundantly on every
//     rank;
//  2. solve: one forward sweep over the interior gives the last entry of y directly and the
//     first one as w . b (w = T^{-T} e_0, computed at setup); MPI_Allgather of the two reduced
//     right-hand sides per rank (the only communication); every rank solves the reduced
//     system (O(p)); one backward sweep, with x_first and x_last folded into the forward-swept
//     right-hand side, gives the block's unknowns. Two passes over the local rows in all.
// Work O(N/p + p) per rank and one collective per solve; the same factorisation serves any
// number of solves. A cyclic reduced system is solved by bordering (its last unknown is
// eliminated through a second spike), not by Sherman-Morrison.
// No pivoting: the method is meant for matrices whose Gaussian elimination without pivoting
// is stable in any order, such as diagonally dominant matrices and M-matrices (implicit
// diffusion, monotone upwind Jacobians). A pivot p with |p| <= eps * (|sub|+|diag|+|super|)
// of its row, or a non-finite pivot, is a zero pivot: setup throws NumericalError naming the
// global row, on every rank.
//
// Collectivity: setup(), solve() and solve_transpose() are collective on comm (every rank,
// same order). Errors are agreed: when one rank finds a zero pivot, every rank throws.
// Not thread-safe (solve uses internal work space).

#include <mpi.h>
#include <petscsys.h>

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"

namespace fracmfg::la {

class TridiagSolver {
 public:
  /// A solver on comm with nothing set up. comm must stay valid as long as the solver is
  /// used. Not collective.
  explicit TridiagSolver(MPI_Comm comm);
  TridiagSolver(TridiagSolver&&) noexcept;
  TridiagSolver& operator=(TridiagSolver&&) noexcept;
  TridiagSolver(const TridiagSolver&) = delete;
  TridiagSolver& operator=(const TridiagSolver&) = delete;
  ~TridiagSolver();

  /// Factors the system whose rows this rank owns: n_local >= 0 rows, arrays of n_local
  /// entries (read only during the call; may be nullptr when n_local == 0). Collective.
  /// Re-setup with the same n_local re-uses all memory (no allocation); a different n_local
  /// or periodic flag re-allocates. Throws NumericalError (every rank) on a zero pivot and
  /// Error (every rank) for n_local < 0 on some rank. After a throw the solver is not set up.
  void setup(PetscInt n_local, const double* sub, const double* diag, const double* super,
             bool periodic);

  /// x = A^{-1} b on this rank's rows (n_local entries each; x may alias b). Collective.
  /// Throws Error if not set up.
  void solve(const double* b, double* x);

  /// Factors and solves in one go, x = A^{-1} b, for a matrix used for a single solve (a
  /// Newton step, an implicit time step): three sweeps over the local rows and one
  /// collective instead of setup()'s five sweeps and solve()'s two, and one collective
  /// instead of two. Arguments as setup() and solve(), but x must not alias b. Afterwards
  /// the solver is not set up (solve() needs setup()). Errors as setup(). Collective.
  void factor_solve(PetscInt n_local, const double* sub, const double* diag, const double* super,
                    bool periodic, const double* b, double* x);

  /// Most values a factor_solve() can carry.
  static constexpr int max_carried_sums = 3;

  /// factor_solve() that also sums `count` (<= max_carried_sums) values over the ranks in
  /// the same collective: total_sums[i] = sum over ranks r (in rank order, so the same on
  /// every rank) of rank r's local_sums[i]. A solver that needs a reduction (a residual
  /// norm) next to its solve saves an MPI_Allreduce. total_sums is written before any error
  /// is raised (a zero pivot still throws on every rank, with the sums delivered).
  void factor_solve(PetscInt n_local, const double* sub, const double* diag, const double* super,
                    bool periodic, const double* b, double* x, const double* local_sums, int count,
                    double* total_sums);

  /// After a solve() or factor_solve() on a rank that owns rows: the solution in the rows
  /// just outside its block, {x[first_row() - 1], x[first_row() + local_size()]} (wrapped
  /// around when periodic; 0 beyond the ends of a non-periodic system). Every rank holds
  /// the interface unknowns of all blocks, so a solver that moves its iterate by x learns
  /// its neighbours' new boundary values without exchanging them. Not collective.
  std::pair<double, double> neighbour_solution() const;

  /// x = A^{-T} b, as solve() for the transposed matrix (PCApplyTranspose, discrete adjoint
  /// equations). The first call after a setup() factors A^T (collective, same cost as
  /// setup(), may throw NumericalError); later calls only solve.
  void solve_transpose(const double* b, double* x);

  bool is_setup() const noexcept { return setup_; }
  MPI_Comm comm() const noexcept { return comm_; }
  bool periodic() const noexcept { return periodic_; }
  /// Rows owned by this rank, the global index of the first and the global size N.
  PetscInt local_size() const noexcept { return n_local_; }
  PetscInt first_row() const noexcept { return first_row_; }
  PetscInt global_size() const noexcept { return n_global_; }
  /// Size R of the reduced (interface) system: sum over ranks of min(n_local, 2).
  PetscInt reduced_size() const noexcept { return static_cast<PetscInt>(reduced_rows_.size()); }
  /// Number of setup() calls that completed, and how many of them had to allocate memory.
  long setups() const noexcept { return setups_; }
  long allocating_setups() const noexcept { return allocating_setups_; }

 private:
  // One rank's contribution to the reduced system, exchanged at setup.
  struct Summary;
  bool factor_interior_continuant(std::size_t mi);  // false: redo the classic way
  // Allgather of the summaries into all_, agreement on errors (thrown on every rank), sizes.
  // sums_count carried sums are added up into sums_total first (factor_solve).
  bool gather_and_agree(const Summary& mine, PetscInt m, bool periodic, const char* who,
                        int sums_count = 0, double* sums_total = nullptr);
  // The start of setup() and factor_solve(): rank and size, this rank's summary with its
  // row count (-1 when the arrays are missing), no failure yet.
  Summary begin_summary(PetscInt n_local, bool arrays_given);
  bool factor_reduced();  // from all_; true when it allocated
  void thomas_reduced(double* v, std::size_t n) const;
  void solve_reduced();
  [[noreturn]] void throw_zero_pivot(PetscInt row, double pivot, double scale) const;

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  bool setup_ = false;
  bool periodic_ = false;
  PetscInt n_local_ = 0;
  PetscInt first_row_ = 0;
  PetscInt n_global_ = 0;
  long setups_ = 0;
  long allocating_setups_ = 0;

  // This rank's rows (copies, for solve_transpose) and the interior factorisation, for the
  // interior rows k = 1 .. n_local-2 stored at k-1: inv_ = 1 / pivot, ell_ = sub / pivot,
  // cp_ = super / pivot (T = L U, L lower bidiagonal with the pivots, U unit upper with cp),
  // w_ = T^{-T} e_0, galpha_ = L^{-1} (-sub[1] e_0) and gbeta_ the last entry of
  // L^{-1} (-super[n-2] e_last).
  std::vector<double> sub_, diag_, super_;
  std::vector<double> inv_, ell_, cp_, w_, galpha_;
  double gbeta_ = 0.0;
  // Reduced system (every rank holds all of it): global row of each unknown, its three
  // coefficients, the factorisation (Thomas on rows 0..R-1, or 0..R-2 when cyclic, plus the
  // bordering spike z_ and Schur complement sigma_), and work space.
  std::vector<PetscInt> reduced_rows_;
  std::vector<int> reduced_offset_;  // first reduced unknown of each rank (size p+1)
  std::vector<double> r_lo_, r_di_, r_up_, r_inv_, r_cp_, r_z_;
  double r_sigma_inv_ = 0.0;
  std::vector<double> r_rhs_, r_x_, gathered_;
  std::vector<Summary> all_;  // every rank's summary from the last setup
  // Neighbour couplings needed by the transposed matrix: super of the previous row and sub
  // of the next row (cyclic wrap when periodic).
  double super_prev_ = 0.0;
  double sub_next_ = 0.0;
  std::unique_ptr<TridiagSolver> transposed_;
  bool transposed_ready_ = false;
};

}  // namespace fracmfg::la
