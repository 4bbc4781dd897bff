// The "fracmfg_tridiag" PC and la::TridiagSolver: exact solves of random diagonally dominant
// tridiagonal systems (periodic and not, uneven ownership down to one or zero rows on a rank)
// against a known solution, the same answer at any rank count, rejection of non-tridiagonal
// matrices and zero pivots with the offending row, re-setup after new values without new
// memory, transposed solves, and selection from the options database.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscdmda.h>
#include <petscksp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/la/petsc_handles.hpp"
#include "fracmfg/la/tridiag_matrix.hpp"
#include "fracmfg/la/tridiag_pc.hpp"
#include "fracmfg/la/tridiag_solver.hpp"

namespace la = fracmfg::la;

namespace {

int comm_rank(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int comm_size(MPI_Comm comm) {
  int s = 0;
  MPI_Comm_size(comm, &s);
  return s;
}

// Uniform in [-1, 1), a pure function of (seed, index, stream): every rank and every rank
// count sees the same numbers.
double uniform(std::uint64_t seed, std::uint64_t index, std::uint64_t stream) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + index * 0xBF58476D1CE4E5B9ULL + stream;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

// A global system, held whole on every rank: row i reads
//   sub[i] x[i-1] + diag[i] x[i] + super[i] x[i+1]   (cyclic indices when periodic).
struct System {
  PetscInt n = 0;
  bool periodic = false;
  std::vector<double> sub, diag, super, x_true;
};

// Strictly diagonally dominant rows with random signs, so the matrix is neither symmetric nor
// definite.
System make_system(PetscInt n, bool periodic, std::uint64_t seed) {
  System s;
  s.n = n;
  s.periodic = periodic;
  const auto nu = static_cast<std::size_t>(n);
  s.sub.resize(nu);
  s.diag.resize(nu);
  s.super.resize(nu);
  s.x_true.resize(nu);
  for (std::size_t i = 0; i < nu; ++i) {
    s.sub[i] = uniform(seed, i, 1);
    s.super[i] = uniform(seed, i, 2);
    if (!periodic && i == 0) s.sub[i] = 0.0;
    if (!periodic && i + 1 == nu) s.super[i] = 0.0;
    const double margin = 0.25 + std::fabs(uniform(seed, i, 3));
    const double sign = uniform(seed, i, 4) < 0.0 ? -1.0 : 1.0;
    s.diag[i] = sign * (std::fabs(s.sub[i]) + std::fabs(s.super[i]) + margin);
    s.x_true[i] = uniform(seed, i, 5);
  }
  return s;
}

enum class Layout { even, ramp, one_row_first, one_row_last, empty_rank };

const char* name(Layout l) {
  switch (l) {
    case Layout::even: return "even";
    case Layout::ramp: return "ramp";
    case Layout::one_row_first: return "one_row_first";
    case Layout::one_row_last: return "one_row_last";
    case Layout::empty_rank: return "empty_rank";
  }
  return "?";
}

// Rows per rank; every rank gets at least one row except for empty_rank (rank 1 gets none
// when there are at least two ranks).
std::vector<PetscInt> layout(PetscInt n, int p, Layout kind) {
  std::vector<PetscInt> counts(static_cast<std::size_t>(p), 0);
  auto spread = [&](PetscInt rows, int from, int to) {  // evenly over ranks [from, to)
    const int k = to - from;
    for (int r = from; r < to; ++r) counts[r] = rows / k + ((r - from) < rows % k ? 1 : 0);
  };
  switch (kind) {
    case Layout::even: spread(n, 0, p); break;
    case Layout::ramp: {
      // Rank r gets about (r + 1) / sum parts, at least one row.
      const PetscInt parts = static_cast<PetscInt>(p) * (p + 1) / 2;
      PetscInt given = 0;
      for (int r = 0; r < p; ++r) {
        counts[r] = std::max<PetscInt>(1, n * (r + 1) / parts);
        given += counts[r];
      }
      counts[p - 1] += n - given;
      break;
    }
    case Layout::one_row_first:
      if (p == 1) {
        counts[0] = n;
      } else {
        counts[0] = 1;
        spread(n - 1, 1, p);
      }
      break;
    case Layout::one_row_last:
      if (p == 1) {
        counts[0] = n;
      } else {
        counts[p - 1] = 1;
        spread(n - 1, 0, p - 1);
      }
      break;
    case Layout::empty_rank:
      if (p == 1) {
        counts[0] = n;
      } else {
        std::vector<int> owners;
        for (int r = 0; r < p; ++r) {
          if (r != 1) owners.push_back(r);
        }
        for (std::size_t k = 0; k < owners.size(); ++k) {
          counts[owners[k]] = n / static_cast<PetscInt>(owners.size()) +
                              (static_cast<PetscInt>(k) < n % static_cast<PetscInt>(owners.size()));
        }
      }
      break;
  }
  return counts;
}

PetscInt first_row(const std::vector<PetscInt>& counts, int rank) {
  PetscInt s = 0;
  for (int r = 0; r < rank; ++r) s += counts[r];
  return s;
}

// Columns and values of global row i (cyclic neighbours when periodic; repeated columns,
// which occur for N <= 2, are added by ADD_VALUES).
int row_entries(const System& s, PetscInt i, PetscInt cols[3], double vals[3]) {
  int k = 0;
  if (i > 0 || s.periodic) {
    cols[k] = (i - 1 + s.n) % s.n;
    vals[k++] = s.sub[i];
  }
  cols[k] = i;
  vals[k++] = s.diag[i];
  if (i + 1 < s.n || s.periodic) {
    cols[k] = (i + 1) % s.n;
    vals[k++] = s.super[i];
  }
  return k;
}

void fill_matrix(Mat A, const System& s) {
  PetscInt rstart = 0;
  PetscInt rend = 0;
  FRACMFG_PETSC_CHECK(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; ++i) {
    PetscInt cols[3];
    double vals[3];
    const int k = row_entries(s, i, cols, vals);
    FRACMFG_PETSC_CHECK(MatSetValues(A, 1, &i, k, cols, vals, ADD_VALUES));
  }
  FRACMFG_PETSC_CHECK(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  FRACMFG_PETSC_CHECK(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
}

// A, as DMCreateMatrix of a 1D DMDA with dof 1 and stencil width 1 gives it.
struct DmdaProblem {
  la::DmHandle da;
  la::MatHandle A;
};
DmdaProblem dmda_problem(MPI_Comm comm, const System& s, const std::vector<PetscInt>& counts) {
  DmdaProblem p;
  FRACMFG_PETSC_CHECK(DMDACreate1d(comm, s.periodic ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE, s.n,
                                   1, 1, counts.data(), p.da.out()));
  FRACMFG_PETSC_CHECK(DMSetUp(p.da));
  FRACMFG_PETSC_CHECK(DMCreateMatrix(p.da, p.A.out()));
  fill_matrix(p.A, s);
  return p;
}

// A as a plain AIJ matrix with the given rows per rank (zero allowed).
la::MatHandle aij_matrix(MPI_Comm comm, const System& s, const std::vector<PetscInt>& counts,
                         PetscInt extra_per_row = 0) {
  la::MatHandle A;
  const PetscInt m = counts[comm_rank(comm)];
  FRACMFG_PETSC_CHECK(MatCreateAIJ(comm, m, m, s.n, s.n, 3 + extra_per_row, nullptr,
                                   2 + extra_per_row, nullptr, A.out()));
  FRACMFG_PETSC_CHECK(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  fill_matrix(A, s);
  return A;
}

void set_from_global(Vec v, const std::vector<double>& global) {
  PetscInt rstart = 0;
  PetscInt rend = 0;
  FRACMFG_PETSC_CHECK(VecGetOwnershipRange(v, &rstart, &rend));
  PetscScalar* a = nullptr;
  FRACMFG_PETSC_CHECK(VecGetArray(v, &a));
  for (PetscInt i = rstart; i < rend; ++i) a[i - rstart] = global[static_cast<std::size_t>(i)];
  FRACMFG_PETSC_CHECK(VecRestoreArray(v, &a));
}

la::KspHandle tridiag_ksp(MPI_Comm comm, Mat A) {
  la::KspHandle ksp = la::create_ksp(comm);
  FRACMFG_PETSC_CHECK(KSPSetOperators(ksp, A, A));
  FRACMFG_PETSC_CHECK(KSPSetType(ksp, KSPPREONLY));
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  FRACMFG_PETSC_CHECK(PCSetType(pc, la::tridiag_pc_type));
  return ksp;
}

// ||x - x_true|| / ||x_true|| after solving A x = A x_true (or A^T x = A^T x_true).
double relative_error(KSP ksp, Mat A, const System& s, bool transpose = false) {
  la::VecHandle x_true;
  la::VecHandle b;
  la::VecHandle x;
  FRACMFG_PETSC_CHECK(MatCreateVecs(A, x_true.out(), b.out()));
  FRACMFG_PETSC_CHECK(VecDuplicate(x_true, x.out()));
  set_from_global(x_true, s.x_true);
  if (transpose) {
    FRACMFG_PETSC_CHECK(MatMultTranspose(A, x_true, b));
    FRACMFG_PETSC_CHECK(KSPSolveTranspose(ksp, b, x));
  } else {
    FRACMFG_PETSC_CHECK(MatMult(A, x_true, b));
    FRACMFG_PETSC_CHECK(KSPSolve(ksp, b, x));
  }
  PetscReal ref = 0;
  PetscReal err = 0;
  FRACMFG_PETSC_CHECK(VecNorm(x_true, NORM_2, &ref));
  FRACMFG_PETSC_CHECK(VecAXPY(x, -1.0, x_true));
  FRACMFG_PETSC_CHECK(VecNorm(x, NORM_2, &err));
  return err / ref;
}

constexpr double exact = 1e-12;

// A x_true (or, transposed, A^T x_true: row i of A^T holds super[i-1], diag[i] and sub[i+1])
// on the global rows first .. first+m-1, cyclic when periodic.
std::vector<double> local_rhs(const System& s, PetscInt first, PetscInt m,
                              bool transposed = false) {
  const PetscInt n = s.n;
  std::vector<double> b(static_cast<std::size_t>(m));
  const auto at = [&](PetscInt j) { return s.x_true[static_cast<std::size_t>(j)]; };
  for (PetscInt k = 0; k < m; ++k) {
    const PetscInt i = first + k;
    const PetscInt west = (i - 1 + n) % n, east = (i + 1) % n;
    double v = s.diag[i] * at(i);
    if (i > 0 || s.periodic) v += (transposed ? s.super[west] : s.sub[i]) * at(west);
    if (i + 1 < n || s.periodic) v += (transposed ? s.sub[east] : s.super[i]) * at(east);
    b[static_cast<std::size_t>(k)] = v;
  }
  return b;
}

// max |x - x_true| over the rows first .. first+m-1 of every rank.
double max_error(MPI_Comm comm, const std::vector<double>& x, const System& s, PetscInt first) {
  double local = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    local = std::max(local, std::fabs(x[k] - s.x_true[static_cast<std::size_t>(first) + k]));
  }
  double global = 0.0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, comm);
  return global;
}

std::vector<PetscInt> sizes_for(int p) {
  return {3 * static_cast<PetscInt>(p), 3 * static_cast<PetscInt>(p) + 1, 7, 64, 1000, 100000};
}

void check_dmda_solves(bool periodic) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  for (PetscInt n : sizes_for(p)) {
    if (periodic && n < 3) continue;
    for (Layout kind : {Layout::even, Layout::ramp, Layout::one_row_first, Layout::one_row_last}) {
      SCOPED_TRACE("N = " + std::to_string(n) + ", layout " + name(kind));
      const System s = make_system(n, periodic, 1000 + static_cast<std::uint64_t>(n));
      const std::vector<PetscInt> counts = layout(n, p, kind);
      DmdaProblem prob = dmda_problem(comm, s, counts);
      la::KspHandle ksp = tridiag_ksp(comm, prob.A);
      EXPECT_LE(relative_error(ksp, prob.A, s), exact);
      PC pc = nullptr;
      FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
      const la::TridiagSolver& solver = la::tridiag_pc_solver(pc);
      EXPECT_EQ(solver.periodic(), periodic && n >= 3);
      EXPECT_EQ(solver.global_size(), n);
      EXPECT_EQ(solver.local_size(), counts[comm_rank(comm)]);
      EXPECT_EQ(solver.first_row(), first_row(counts, comm_rank(comm)));
      const PetscInt reduced = n >= 2 * p ? 2 * p : -1;
      if (reduced > 0 && kind == Layout::even) {
        EXPECT_EQ(solver.reduced_size(), reduced);
      }
    }
  }
}

TEST(TridiagPc, SolvesNonPeriodicDmdaSystemsExactly) {
  check_dmda_solves(false);
}

TEST(TridiagPc, SolvesPeriodicDmdaSystemsExactly) {
  check_dmda_solves(true);
}

TEST(TridiagPc, SolvesTransposedSystemsExactly) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  for (bool periodic : {false, true}) {
    for (PetscInt n : {3 * static_cast<PetscInt>(p), static_cast<PetscInt>(50), 10000}) {
      for (Layout kind : {Layout::ramp, Layout::one_row_last}) {
        SCOPED_TRACE("periodic " + std::to_string(periodic) + ", N = " + std::to_string(n) +
                     ", layout " + name(kind));
        const System s = make_system(n, periodic, 77);
        DmdaProblem prob = dmda_problem(comm, s, layout(n, p, kind));
        la::KspHandle ksp = tridiag_ksp(comm, prob.A);
        EXPECT_LE(relative_error(ksp, prob.A, s, /*transpose=*/true), exact);
        EXPECT_LE(relative_error(ksp, prob.A, s), exact);  // both directions from one setup
      }
    }
  }
}

TEST(TridiagPc, HandlesRanksWithoutRowsAndTinySystems) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  for (bool periodic : {false, true}) {
    for (PetscInt n : {1, 2, 3, 4, 5, 11}) {
      for (Layout kind : {Layout::even, Layout::empty_rank}) {
        SCOPED_TRACE("periodic " + std::to_string(periodic) + ", N = " + std::to_string(n) +
                     ", layout " + name(kind));
        const System s = make_system(n, periodic, 5);
        la::MatHandle A = aij_matrix(comm, s, layout(n, p, kind));
        la::KspHandle ksp = tridiag_ksp(comm, A);
        EXPECT_LE(relative_error(ksp, A, s), exact);
        EXPECT_LE(relative_error(ksp, A, s, true), exact);
      }
    }
  }
}

// Matrix types other than (Seq|MPI)AIJ are read row by row (MatGetRow): a dense matrix,
// whose entries outside the band are stored zeros.
TEST(TridiagPc, ReadsOtherMatrixTypesRowByRow) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  for (bool periodic : {false, true}) {
    SCOPED_TRACE(periodic ? "periodic" : "non-periodic");
    const System s = make_system(37, periodic, 21);
    const std::vector<PetscInt> counts = layout(s.n, p, Layout::one_row_last);
    const PetscInt m = counts[comm_rank(comm)];
    la::MatHandle A;
    FRACMFG_PETSC_CHECK(MatCreateDense(comm, m, m, s.n, s.n, nullptr, A.out()));
    fill_matrix(A, s);
    la::TridiagRows rows;
    la::extract_tridiagonal(A, rows);
    EXPECT_EQ(rows.periodic, periodic);
    EXPECT_EQ(rows.global_size, s.n);
    ASSERT_EQ(rows.local_size(), m);
    for (PetscInt k = 0; k < m; ++k) {
      const auto i = static_cast<std::size_t>(rows.first_row + k);
      EXPECT_EQ(rows.sub[k], s.sub[i]);
      EXPECT_EQ(rows.diag[k], s.diag[i]);
      EXPECT_EQ(rows.super[k], s.super[i]);
    }
    la::KspHandle ksp = tridiag_ksp(comm, A);
    EXPECT_LE(relative_error(ksp, A, s), exact);
  }
}

// The direct API with the cyclic coefficients kept apart (for N <= 2 they multiply the same
// unknown), against b computed from the global arrays.
TEST(TridiagSolver, DirectApiSolvesCyclicSystemsOfAnySize) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  const int rank = comm_rank(comm);
  for (bool periodic : {false, true}) {
    for (PetscInt n : {1, 2, 3, 6, 200}) {
      for (Layout kind : {Layout::even, Layout::empty_rank, Layout::one_row_first}) {
        SCOPED_TRACE("periodic " + std::to_string(periodic) + ", N = " + std::to_string(n) +
                     ", layout " + name(kind));
        const System s = make_system(n, periodic, 9);
        const std::vector<PetscInt> counts = layout(n, p, kind);
        const PetscInt first = first_row(counts, rank);
        const PetscInt m = counts[rank];
        std::vector<double> b = local_rhs(s, first, m);
        la::TridiagSolver solver(comm);
        solver.setup(m, s.sub.data() + first, s.diag.data() + first, s.super.data() + first,
                     periodic);
        std::vector<double> x(b.size());
        solver.solve(b.data(), x.data());
        EXPECT_LE(max_error(comm, x, s, first), exact);
        // factor_solve: the same system in one call (another solver object, so that the
        // factorisation above stays in use).
        la::TridiagSolver once(comm);
        std::vector<double> y(b.size());
        once.factor_solve(m, s.sub.data() + first, s.diag.data() + first, s.super.data() + first,
                          periodic, b.data(), y.data());
        EXPECT_LE(max_error(comm, y, s, first), exact) << "factor_solve";
        EXPECT_FALSE(once.is_setup());
        // In place (x aliases b).
        solver.solve(b.data(), b.data());
        for (PetscInt k = 0; k < m; ++k) EXPECT_EQ(b[k], x[k]);
      }
    }
  }
}

// factor_solve's carried sums arrive summed in rank order on every rank (also when the
// solve fails), and neighbour_solution() returns the solution in the rows just outside the
// rank's block, bit for bit what the owning rank computed (after solve() and factor_solve(),
// across empty ranks, wrapped when periodic, 0 beyond the ends otherwise).
TEST(TridiagSolver, FactorSolveCarriesSumsAndTellsTheNeighbourSolution) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  const int rank = comm_rank(comm);
  for (bool periodic : {false, true}) {
    for (PetscInt n : {PetscInt{3}, PetscInt{7}, PetscInt{200}}) {
      for (Layout kind : {Layout::even, Layout::empty_rank, Layout::one_row_first}) {
        SCOPED_TRACE("periodic " + std::to_string(periodic) + ", N = " + std::to_string(n) +
                     ", layout " + name(kind));
        const System s = make_system(n, periodic, 21);
        const std::vector<PetscInt> counts = layout(n, p, kind);
        const PetscInt first = first_row(counts, rank);
        const PetscInt m = counts[rank];
        const std::vector<double> b = local_rhs(s, first, m);
        la::TridiagSolver solver(comm);
        std::vector<double> x(b.size());
        const double mine[3] = {rank + 1.0, static_cast<double>(m), 0.25 * rank};
        double total[3] = {-1.0, -1.0, -1.0};
        solver.factor_solve(m, s.sub.data() + first, s.diag.data() + first, s.super.data() + first,
                            periodic, b.data(), x.data(), mine, 3, total);
        EXPECT_EQ(total[0], 0.5 * p * (p + 1));
        EXPECT_EQ(total[1], static_cast<double>(n));
        EXPECT_EQ(total[2], 0.125 * p * (p - 1));
        EXPECT_LE(max_error(comm, x, s, first), exact);

        // The whole solution, to read the neighbours' rows.
        std::vector<int> recv(static_cast<std::size_t>(p)), displ(static_cast<std::size_t>(p));
        for (int r = 0; r < p; ++r) {
          recv[r] = static_cast<int>(counts[r]);
          displ[r] = static_cast<int>(first_row(counts, r));
        }
        auto check = [&](const std::vector<double>& mine_x, const char* after) {
          std::vector<double> all(static_cast<std::size_t>(n));
          MPI_Allgatherv(mine_x.data(), static_cast<int>(m), MPI_DOUBLE, all.data(), recv.data(),
                         displ.data(), MPI_DOUBLE, comm);
          if (m == 0) return;
          const auto [west, east] = solver.neighbour_solution();
          const PetscInt w = first - 1, e = first + m;
          const double want_w = w >= 0 ? all[w] : (periodic ? all[n - 1] : 0.0);
          const double want_e = e < n ? all[e] : (periodic ? all[0] : 0.0);
          EXPECT_EQ(west, want_w) << after;
          EXPECT_EQ(east, want_e) << after;
        };
        check(x, "factor_solve");
        solver.setup(m, s.sub.data() + first, s.diag.data() + first, s.super.data() + first,
                     periodic);
        std::vector<double> y(b.size());
        solver.solve(b.data(), y.data());
        check(y, "solve");
      }
    }
  }

  // A singular matrix: every rank throws, with the sums delivered.
  const PetscInt n = 12;
  System s = make_system(n, false, 5);
  s.sub[4] = s.diag[4] = s.super[4] = 0.0;
  const std::vector<PetscInt> counts = layout(n, p, Layout::even);
  const PetscInt first = first_row(counts, rank);
  std::vector<double> b(static_cast<std::size_t>(counts[rank]), 1.0), x(b.size());
  const double one = 1.0;
  double total = 0.0;
  la::TridiagSolver solver(comm);
  EXPECT_THROW(
      solver.factor_solve(counts[rank], s.sub.data() + first, s.diag.data() + first,
                          s.super.data() + first, false, b.data(), x.data(), &one, 1, &total),
      fracmfg::NumericalError);
  EXPECT_EQ(total, static_cast<double>(p));
  // More sums than the collective carries, or none to write to: refused before any message.
  EXPECT_THROW(solver.factor_solve(counts[rank], s.sub.data() + first, s.diag.data() + first,
                                   s.super.data() + first, false, b.data(), x.data(), &one,
                                   la::TridiagSolver::max_carried_sums + 1, &total),
               fracmfg::Error);
  EXPECT_THROW(
      solver.factor_solve(counts[rank], s.sub.data() + first, s.diag.data() + first,
                          s.super.data() + first, false, b.data(), x.data(), &one, 1, nullptr),
      fracmfg::Error);
}

// The interior factorisation runs on ratios of leading minors, rescaled by powers of two:
// coefficients near the ends of the double range (the whole matrix scaled by 1e+-250, where
// the products a c underflow and the classic recurrence takes over, or rows scaled
// alternately by 1e+-150, so that the minors jump by 1e300 from row to row) are solved as
// exactly as unit ones, by setup + solve, by factor_solve and (uniform scaling) transposed.
TEST(TridiagSolver, SolvesSystemsWithHugeAndTinyCoefficients) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  const int rank = comm_rank(comm);
  const PetscInt n = 3000;
  for (bool periodic : {false, true}) {
    for (int kind = 0; kind < 3; ++kind) {
      SCOPED_TRACE(std::string(periodic ? "periodic" : "not periodic") + ", scaling " +
                   std::to_string(kind));
      System s = make_system(n, periodic, 23);
      std::vector<double> row_scale(static_cast<std::size_t>(n));
      for (PetscInt i = 0; i < n; ++i) {
        row_scale[i] = kind == 0 ? 1e250 : kind == 1 ? 1e-250 : (i % 2 == 0 ? 1e150 : 1e-150);
        s.sub[i] *= row_scale[i];
        s.diag[i] *= row_scale[i];
        s.super[i] *= row_scale[i];
      }
      const std::vector<PetscInt> counts = layout(n, p, Layout::even);
      const PetscInt first = first_row(counts, rank);
      const PetscInt m = counts[rank];
      const std::vector<double> b = local_rhs(s, first, m);
      la::TridiagSolver solver(comm);
      solver.setup(m, s.sub.data() + first, s.diag.data() + first, s.super.data() + first,
                   periodic);
      std::vector<double> x(b.size());
      solver.solve(b.data(), x.data());
      EXPECT_LE(max_error(comm, x, s, first), exact) << "setup + solve";
      la::TridiagSolver once(comm);
      once.factor_solve(m, s.sub.data() + first, s.diag.data() + first, s.super.data() + first,
                        periodic, b.data(), x.data());
      EXPECT_LE(max_error(comm, x, s, first), exact) << "factor_solve";
      if (kind == 2) continue;  // A^T is column-scaled: no longer row diagonally dominant
      const std::vector<double> bt = local_rhs(s, first, m, true);
      solver.solve_transpose(bt.data(), x.data());
      EXPECT_LE(max_error(comm, x, s, first), exact) << "solve_transpose";
    }
  }
}

// The solution on p ranks equals the one on 1 rank (and on 2 of 3 ranks) to round-off.
TEST(TridiagPc, SolutionIsTheSameAtEveryRankCount) {
  const MPI_Comm world = PETSC_COMM_WORLD;
  const int p = comm_size(world);
  const int rank = comm_rank(world);
  const PetscInt n = 20000;
  for (bool periodic : {false, true}) {
    SCOPED_TRACE(periodic ? "periodic" : "non-periodic");
    const System s = make_system(n, periodic, 31);
    auto solve_on = [&](MPI_Comm comm, Layout kind) {
      DmdaProblem prob = dmda_problem(comm, s, layout(n, comm_size(comm), kind));
      la::KspHandle ksp = tridiag_ksp(comm, prob.A);
      la::VecHandle b;
      la::VecHandle x;
      FRACMFG_PETSC_CHECK(MatCreateVecs(prob.A, x.out(), b.out()));
      set_from_global(x, s.x_true);
      FRACMFG_PETSC_CHECK(MatMult(prob.A, x, b));
      FRACMFG_PETSC_CHECK(KSPSolve(ksp, b, x));
      PetscInt rstart = 0;
      PetscInt rend = 0;
      FRACMFG_PETSC_CHECK(VecGetOwnershipRange(x, &rstart, &rend));
      std::vector<double> part(static_cast<std::size_t>(rend - rstart));
      const PetscScalar* a = nullptr;
      FRACMFG_PETSC_CHECK(VecGetArrayRead(x, &a));
      std::copy(a, a + part.size(), part.begin());
      FRACMFG_PETSC_CHECK(VecRestoreArrayRead(x, &a));
      return std::make_pair(rstart, part);
    };
    const std::pair<PetscInt, std::vector<double>> whole = solve_on(PETSC_COMM_SELF, Layout::even);
    ASSERT_EQ(whole.first, 0);
    const std::vector<double>& serial = whole.second;
    double scale = 0.0;
    for (double v : serial) scale = std::max(scale, std::fabs(v));

    auto compare = [&](const std::pair<PetscInt, std::vector<double>>& dist) {
      double local = 0.0;
      for (std::size_t k = 0; k < dist.second.size(); ++k) {
        local = std::max(local, std::fabs(dist.second[k] - serial[dist.first + k]));
      }
      return local / scale;
    };
    double local_diff = compare(solve_on(world, Layout::ramp));
    MPI_Comm pair = MPI_COMM_NULL;  // ranks 0 and 1 of a larger run
    MPI_Comm_split(world, p > 2 && rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (pair != MPI_COMM_NULL) {
      local_diff = std::max(local_diff, compare(solve_on(pair, Layout::one_row_first)));
      MPI_Comm_free(&pair);
    }
    double diff = 0.0;
    MPI_Allreduce(&local_diff, &diff, 1, MPI_DOUBLE, MPI_MAX, world);
    EXPECT_LE(diff, 1e-13);
  }
}

// Implicit diffusion steps I/dt - nu d^2/dx^2 (the matrices of the L1 scheme and of the HJB
// Newton steps; reflecting or periodic ends): weakly diagonally dominant M-matrices with a
// condition number near 4 nu dt / h^2 (2e7 and 2e11 here). The solve must be backward
// stable (a residual at round-off level relative to |A| |x|, whatever the condition number)
// and as accurate as LU with partial pivoting.
TEST(TridiagPc, SolvesIllConditionedDiffusionMatricesBackwardStably) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  const PetscInt n = 100000;
  for (bool periodic : {false, true}) {
    for (double dt : {1e-2, 1e2}) {
      SCOPED_TRACE(std::string(periodic ? "periodic" : "reflecting") +
                   ", dt = " + std::to_string(dt));
      System s = make_system(n, periodic, 17);
      const double k = 0.05 * static_cast<double>(n) * static_cast<double>(n);
      for (PetscInt i = 0; i < n; ++i) {
        s.sub[i] = s.super[i] = -k;
        s.diag[i] = 1.0 / dt + 2.0 * k;
      }
      if (!periodic) {
        s.sub[0] = s.super[n - 1] = 0.0;
        s.diag[0] -= k;
        s.diag[n - 1] -= k;
      }
      DmdaProblem prob = dmda_problem(comm, s, layout(n, p, Layout::ramp));
      la::KspHandle ksp = tridiag_ksp(comm, prob.A);
      la::VecHandle b;
      la::VecHandle x;
      la::VecHandle r;
      FRACMFG_PETSC_CHECK(MatCreateVecs(prob.A, x.out(), b.out()));
      FRACMFG_PETSC_CHECK(VecDuplicate(b, r.out()));
      set_from_global(b, s.x_true);  // rough right-hand side: the hard case
      FRACMFG_PETSC_CHECK(KSPSolve(ksp, b, x));
      FRACMFG_PETSC_CHECK(MatMult(prob.A, x, r));
      FRACMFG_PETSC_CHECK(VecAYPX(r, -1.0, b));
      PetscReal res = 0;
      PetscReal xnorm = 0;
      PetscReal bnorm = 0;
      PetscReal anorm = 0;
      FRACMFG_PETSC_CHECK(VecNorm(r, NORM_INFINITY, &res));
      FRACMFG_PETSC_CHECK(VecNorm(x, NORM_INFINITY, &xnorm));
      FRACMFG_PETSC_CHECK(VecNorm(b, NORM_INFINITY, &bnorm));
      FRACMFG_PETSC_CHECK(MatNorm(prob.A, NORM_INFINITY, &anorm));
      const double backward = res / (anorm * xnorm + bnorm);
      EXPECT_LE(backward, 1e-14) << "residual " << res;
      // The forward error can only be as good as the condition number allows; it must match
      // that of PETSc's LU with partial pivoting on the same system.
      la::KspHandle lu = la::create_ksp(comm);
      FRACMFG_PETSC_CHECK(KSPSetOperators(lu, prob.A, prob.A));
      FRACMFG_PETSC_CHECK(KSPSetType(lu, KSPPREONLY));
      PC pc = nullptr;
      FRACMFG_PETSC_CHECK(KSPGetPC(lu, &pc));
      FRACMFG_PETSC_CHECK(PCSetType(pc, PCREDUNDANT));
      const double ours = relative_error(ksp, prob.A, s);
      const double theirs = relative_error(lu, prob.A, s);
      EXPECT_LE(ours, 10.0 * theirs + 1e-14) << "LU's error " << theirs;
    }
  }
}

TEST(TridiagPc, AgreesWithPetscLu) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  for (bool periodic : {false, true}) {
    const System s = make_system(5000, periodic, 123);
    DmdaProblem prob = dmda_problem(comm, s, layout(s.n, p, Layout::ramp));
    la::VecHandle b;
    la::VecHandle x;
    la::VecHandle x_lu;
    FRACMFG_PETSC_CHECK(MatCreateVecs(prob.A, x.out(), b.out()));
    FRACMFG_PETSC_CHECK(VecDuplicate(x, x_lu.out()));
    set_from_global(b, s.x_true);  // any right-hand side
    la::KspHandle ksp = tridiag_ksp(comm, prob.A);
    FRACMFG_PETSC_CHECK(KSPSolve(ksp, b, x));
    la::KspHandle lu = la::create_ksp(comm);
    FRACMFG_PETSC_CHECK(KSPSetOperators(lu, prob.A, prob.A));
    FRACMFG_PETSC_CHECK(KSPSetType(lu, KSPPREONLY));
    PC pc = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetPC(lu, &pc));
    FRACMFG_PETSC_CHECK(PCSetType(pc, PCREDUNDANT));  // sequential LU of the gathered matrix
    FRACMFG_PETSC_CHECK(KSPSolve(lu, b, x_lu));
    PetscReal ref = 0;
    PetscReal diff = 0;
    FRACMFG_PETSC_CHECK(VecNorm(x_lu, NORM_2, &ref));
    FRACMFG_PETSC_CHECK(VecAXPY(x, -1.0, x_lu));
    FRACMFG_PETSC_CHECK(VecNorm(x, NORM_2, &diff));
    EXPECT_LE(diff / ref, exact) << (periodic ? "periodic" : "non-periodic");
  }
}

TEST(TridiagPc, IsSelectedFromTheOptionsDatabase) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const System s = make_system(301, true, 8);
  DmdaProblem prob = dmda_problem(comm, s, layout(s.n, comm_size(comm), Layout::even));
  la::KspHandle ksp = la::create_ksp(comm);
  FRACMFG_PETSC_CHECK(KSPSetOperators(ksp, prob.A, prob.A));
  FRACMFG_PETSC_CHECK(PetscOptionsInsertString(nullptr, "-pc_type fracmfg_tridiag"));
  FRACMFG_PETSC_CHECK(PetscOptionsInsertString(nullptr, "-ksp_type preonly"));
  const PetscErrorCode ierr = KSPSetFromOptions(ksp);
  FRACMFG_PETSC_CHECK(PetscOptionsClearValue(nullptr, "-pc_type"));
  FRACMFG_PETSC_CHECK(PetscOptionsClearValue(nullptr, "-ksp_type"));
  FRACMFG_PETSC_CHECK(ierr);
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  PCType type = nullptr;
  FRACMFG_PETSC_CHECK(PCGetType(pc, &type));
  ASSERT_NE(type, nullptr);
  EXPECT_STREQ(type, "fracmfg_tridiag");
  EXPECT_TRUE(la::is_tridiag_pc(pc));
  KSPType ktype = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetType(ksp, &ktype));
  EXPECT_STREQ(ktype, KSPPREONLY);
  EXPECT_LE(relative_error(ksp, prob.A, s), exact);
}

TEST(TridiagPc, RegistrationIsIdempotent) {
  la::register_petsc_types();
  la::register_petsc_types();
  la::KspHandle ksp = la::create_ksp(PETSC_COMM_WORLD);
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  FRACMFG_PETSC_CHECK(PCSetType(pc, la::tridiag_pc_type));
  EXPECT_TRUE(la::is_tridiag_pc(pc));
  EXPECT_THROW(la::tridiag_pc_solver(pc), fracmfg::Error);  // not set up yet
}

// Newton-like use: new values in the same matrix, the PC sets up again on the next solve,
// with the memory of the first setup.
TEST(TridiagPc, SetsUpAgainWhenTheMatrixValuesChange) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  for (bool periodic : {false, true}) {
    SCOPED_TRACE(periodic ? "periodic" : "non-periodic");
    const System first = make_system(4000, periodic, 1);
    DmdaProblem prob = dmda_problem(comm, first, layout(first.n, p, Layout::ramp));
    la::KspHandle ksp = tridiag_ksp(comm, prob.A);
    EXPECT_LE(relative_error(ksp, prob.A, first), exact);

    for (std::uint64_t step = 2; step <= 4; ++step) {
      const System next = make_system(first.n, periodic, step);
      FRACMFG_PETSC_CHECK(MatZeroEntries(prob.A));
      fill_matrix(prob.A, next);
      EXPECT_LE(relative_error(ksp, prob.A, next), exact);
    }
    PC pc = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
    const la::TridiagSolver& solver = la::tridiag_pc_solver(pc);
    EXPECT_EQ(solver.setups(), 4);
    EXPECT_EQ(solver.allocating_setups(), 1);
  }
}

TEST(TridiagSolver, DirectReSetupReusesMemory) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  const int rank = comm_rank(comm);
  const std::vector<PetscInt> counts = layout(999, p, Layout::ramp);
  const PetscInt first = first_row(counts, rank);
  la::TridiagSolver solver(comm);
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const System s = make_system(999, true, seed);
    solver.setup(counts[rank], s.sub.data() + first, s.diag.data() + first, s.super.data() + first,
                 true);
  }
  EXPECT_EQ(solver.setups(), 3);
  EXPECT_EQ(solver.allocating_setups(), 1);
  EXPECT_TRUE(solver.is_setup());
}

// A nonzero two columns off the diagonal, on a row next to a rank boundary (so on several
// ranks the entry couples to another rank's unknowns).
TEST(TridiagPc, RejectsANonTridiagonalMatrixWithItsRowAndColumn) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  const System s = make_system(60, false, 3);
  const std::vector<PetscInt> counts = layout(s.n, p, Layout::even);
  const PetscInt bad_row = p > 1 ? counts[0] : 20;  // first row of rank 1
  const PetscInt bad_col = bad_row - 2;
  for (bool explicit_zero : {true, false}) {
    SCOPED_TRACE(explicit_zero ? "stored zero" : "nonzero");
    la::MatHandle A = aij_matrix(comm, s, counts, /*extra_per_row=*/2);
    PetscInt rstart = 0;
    PetscInt rend = 0;
    FRACMFG_PETSC_CHECK(MatGetOwnershipRange(A, &rstart, &rend));
    if (bad_row >= rstart && bad_row < rend) {
      const double v = explicit_zero ? 0.0 : 0.5;
      FRACMFG_PETSC_CHECK(MatSetValue(A, bad_row, bad_col, v, INSERT_VALUES));
    }
    FRACMFG_PETSC_CHECK(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    FRACMFG_PETSC_CHECK(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    la::KspHandle ksp = tridiag_ksp(comm, A);
    if (explicit_zero) {
      // A stored zero outside the band is no coupling: still an exact solve.
      EXPECT_LE(relative_error(ksp, A, s), exact);
      continue;
    }
    la::TridiagRows rows;
    try {
      la::extract_tridiagonal(A, rows);
      ADD_FAILURE() << "extract_tridiagonal accepted a pentadiagonal entry";
    } catch (const la::NotTridiagonalError& e) {
      EXPECT_EQ(e.row(), bad_row);
      EXPECT_EQ(e.column(), bad_col);
    }
    const std::string expected = "matrix is not tridiagonal: row " + std::to_string(bad_row) +
                                 " has a nonzero in column " + std::to_string(bad_col);
    try {
      relative_error(ksp, A, s);
      ADD_FAILURE() << "KSPSolve accepted a non-tridiagonal matrix";
    } catch (const fracmfg::PetscError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

TEST(TridiagPc, RejectsRowAndColumnRangesThatDiffer) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  const int rank = comm_rank(comm);
  const PetscInt n = 10;
  const PetscInt m = rank == 0 ? 4 : (rank == 1 ? n - 4 - (p - 2) : 1);
  const PetscInt mc = rank == 0 ? 5 : (rank == 1 ? n - 5 - (p - 2) : 1);
  la::MatHandle A;
  FRACMFG_PETSC_CHECK(MatCreateAIJ(comm, m, mc, n, n, 3, nullptr, 3, nullptr, A.out()));
  PetscInt rstart = 0;
  PetscInt rend = 0;
  FRACMFG_PETSC_CHECK(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; ++i)
    FRACMFG_PETSC_CHECK(MatSetValue(A, i, i, 2.0, INSERT_VALUES));
  FRACMFG_PETSC_CHECK(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  FRACMFG_PETSC_CHECK(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  la::TridiagRows rows;
  try {
    la::extract_tridiagonal(A, rows);
    ADD_FAILURE() << "accepted differing row and column ranges";
  } catch (const fracmfg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("column range"), std::string::npos) << e.what();
  }
}

// A zero row makes the matrix singular; whichever rank meets the zero pivot, every rank
// reports the same row.
TEST(TridiagSolver, ZeroPivotIsReportedWithItsGlobalRowOnEveryRank) {
  const MPI_Comm comm = PETSC_COMM_WORLD;
  const int p = comm_size(comm);
  const int rank = comm_rank(comm);
  const PetscInt n = 40;
  const std::vector<PetscInt> counts = layout(n, p, Layout::ramp);
  const PetscInt first = first_row(counts, rank);
  for (bool periodic : {false, true}) {
    const PetscInt rank1_first = p > 1 ? counts[0] : n / 2;  // a block's first row
    for (PetscInt zero_row : {PetscInt{0}, PetscInt{1}, rank1_first, PetscInt{17}, n - 1}) {
      SCOPED_TRACE("periodic " + std::to_string(periodic) + ", zero row " +
                   std::to_string(zero_row));
      System s = make_system(n, periodic, 4);
      s.sub[zero_row] = s.diag[zero_row] = s.super[zero_row] = 0.0;
      la::TridiagSolver solver(comm);
      const std::string expected = "zero pivot at global row " + std::to_string(zero_row) + " ";
      try {
        solver.setup(counts[rank], s.sub.data() + first, s.diag.data() + first,
                     s.super.data() + first, periodic);
        ADD_FAILURE() << "setup accepted a singular matrix";
      } catch (const fracmfg::NumericalError& e) {
        EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      }
      EXPECT_FALSE(solver.is_setup());
      std::vector<double> b(static_cast<std::size_t>(counts[rank]), 1.0);
      EXPECT_THROW(solver.solve(b.data(), b.data()), fracmfg::Error);
      // factor_solve falls back to the classic factorisation, which names the row.
      std::vector<double> x(b.size());
      try {
        solver.factor_solve(counts[rank], s.sub.data() + first, s.diag.data() + first,
                            s.super.data() + first, periodic, b.data(), x.data());
        ADD_FAILURE() << "factor_solve accepted a singular matrix";
      } catch (const fracmfg::NumericalError& e) {
        EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      }

      // The same through KSPSolve: a PETSc error carrying the message.
      DmdaProblem prob = dmda_problem(comm, s, counts);
      la::KspHandle ksp = tridiag_ksp(comm, prob.A);
      try {
        relative_error(ksp, prob.A, s);
        ADD_FAILURE() << "KSPSolve accepted a singular matrix";
      } catch (const fracmfg::PetscError& e) {
        EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      }
    }
  }
}

}  // namespace
