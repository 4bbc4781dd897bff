// frac::FodeSolver distributed by component: a semi-discretised reaction-diffusion system
//
//   D^{a_i} y_i = (A y)_i + g_i(t, y_i),   A = tridiag(1, -2, 1),
//   g_i(t, y) = -y^3/2 + cos(t + 0.001 i)/10,   a_i = 0.6 (i even) or 0.9 (i odd),
//
// with d = 10^5 components, solved on all ranks of the test (PETSC_DECIDE split or an uneven
// given one) gives the 1-rank result to round-off: the reference is computed inside the test
// on a communicator holding rank 0 only, and every component is compared at an intermediate
// and the last step. Both methods; the implicit one solves its Newton systems with GMRES and
// a Jacobi preconditioner (options prefix "fodetest_"; the same preconditioner at any rank
// count). Newton's method iterates to 1e-12 and each linear solve gains 1e-10, so both runs
// converge to the same root far below round-off: the comparison is one of round-off.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscmat.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/frac/fode_solver.hpp"

namespace ff = fracmfg::frac;

namespace {

constexpr PetscInt kComponents = 100000;
constexpr std::int64_t kSteps = 40;
constexpr std::int64_t kMiddle = 23;

/// tridiag(1, -2, 1) of size n with `local` rows on this rank of comm.
Mat laplacian(MPI_Comm comm, PetscInt local, PetscInt n = kComponents) {
  Mat a = nullptr;
  MatCreateAIJ(comm, local, local, n, n, 3, nullptr, 2, nullptr, &a);
  PetscInt lo = 0, hi = 0;
  MatGetOwnershipRange(a, &lo, &hi);
  for (PetscInt i = lo; i < hi; ++i) {
    if (i > 0) MatSetValue(a, i, i - 1, 1.0, INSERT_VALUES);
    MatSetValue(a, i, i, -2.0, INSERT_VALUES);
    if (i + 1 < n) MatSetValue(a, i, i + 1, 1.0, INSERT_VALUES);
  }
  MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY);
  return a;
}

struct Result {
  std::vector<double> middle;  // the rank's components at step kMiddle
  std::vector<double> last;    // and at step kSteps
};

Result solve(MPI_Comm comm, PetscInt local, ff::FodeMethod method, bool with_mat) {
  Mat a = with_mat ? laplacian(comm, local) : nullptr;
  PetscInt first = 0;
  MPI_Exscan(&local, &first, 1, MPIU_INT, MPI_SUM, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) first = 0;

  ff::FodeProblem p;
  p.global_size = kComponents;
  p.local_size = local;
  p.horizon = 1.0;
  p.steps = kSteps;
  p.order.resize(static_cast<std::size_t>(local));
  p.initial.resize(static_cast<std::size_t>(local));
  for (PetscInt k = 0; k < local; ++k) {
    const PetscInt i = first + k;
    p.order[static_cast<std::size_t>(k)] = i % 2 == 0 ? 0.6 : 0.9;
    p.initial[static_cast<std::size_t>(k)] = std::sin(6.283185307179586 * i / kComponents) + 0.5;
  }
  ff::FodeRhs rhs;
  rhs.linear = a;
  rhs.pointwise = [](double t, PetscInt i0, std::size_t n, const double* y, double* g) {
    for (std::size_t k = 0; k < n; ++k) {
      const double i = static_cast<double>(i0) + static_cast<double>(k);
      g[k] = -0.5 * y[k] * y[k] * y[k] + 0.1 * std::cos(t + 1e-3 * i);
    }
  };
  rhs.pointwise_derivative = [](double, PetscInt, std::size_t n, const double* y, double* dg) {
    for (std::size_t k = 0; k < n; ++k) dg[k] = -1.5 * y[k] * y[k];
  };
  ff::FodeOptions o;
  o.method = method;
  o.history = ff::FodeHistory::fft;
  o.block_size = 8;  // P = 41 -> S = 64: FFT squares of 8, 16 and 32 steps
  o.options_prefix = "fodetest_";
  ff::FodeSolver solver(comm, p, rhs, o);
  if (a != nullptr) MatDestroy(&a);  // the solver keeps its own reference
  Result r;
  const ff::FodeStats stats = solver.solve(
      [&](const ff::FodeStepView& v) {
        if (v.step == kMiddle) r.middle.assign(v.y, v.y + v.local_size);
      },
      kMiddle);
  EXPECT_GT(stats.fft_squares, 0);
  r.last = solver.solution();
  return r;
}

/// Rank 0 gathers every rank's block (in rank order).
std::vector<double> gather(const std::vector<double>& local) {
  int size = 1, rank = 0;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  const int n = static_cast<int>(local.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, PETSC_COMM_WORLD);
  std::partial_sum(counts.begin(), counts.end() - 1, offsets.begin() + 1);
  std::vector<double> all(rank == 0 ? static_cast<std::size_t>(kComponents) : 0);
  MPI_Gatherv(local.data(), n, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, 0,
              PETSC_COMM_WORLD);
  return all;
}

/// Largest |x - ref| / (1 + |ref|) on rank 0, broadcast.
double difference(const std::vector<double>& ref, const std::vector<double>& x) {
  double worst = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    worst = std::max(worst, std::fabs(x[i] - ref[i]) / (1.0 + std::fabs(ref[i])));
  }
  MPI_Bcast(&worst, 1, MPI_DOUBLE, 0, PETSC_COMM_WORLD);
  return worst;
}

void compare_with_one_rank(ff::FodeMethod method, bool with_mat, bool uneven) {
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  // The reference on a communicator of rank 0 alone.
  Result ref;
  MPI_Comm self = MPI_COMM_NULL;
  MPI_Comm_split(PETSC_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &self);
  if (self != MPI_COMM_NULL) {
    ref = solve(self, kComponents, method, with_mat);
    MPI_Comm_free(&self);
  }
  // The distributed run: PETSC_DECIDE, or rank r holding (r + 1) shares of the components.
  PetscInt local = ff::fode_local_size(PETSC_COMM_WORLD, kComponents);
  if (uneven) {
    const PetscInt shares = size * (size + 1) / 2;
    local = kComponents / shares * (rank + 1);
    if (rank == size - 1) local = kComponents - kComponents / shares * (shares - size);
  }
  const Result run = solve(PETSC_COMM_WORLD, local, method, with_mat);
  const auto middle = gather(run.middle);
  const auto last = gather(run.last);
  const double d_middle = difference(ref.middle, middle);
  const double d_last = difference(ref.last, last);
  if (rank == 0) {
    std::printf("%s%s%s on %d rank(s): difference %.2e (step %lld), %.2e (last)\n",
                ff::to_string(method), with_mat ? " with Mat" : " pointwise",
                uneven ? ", uneven layout" : "", size, d_middle, static_cast<long long>(kMiddle),
                d_last);
  }
  EXPECT_LE(d_middle, 1e-12);
  EXPECT_LE(d_last, 1e-12);
  // The solution moved away from the initial values (the comparison is not vacuous).
  if (rank == 0) {
    EXPECT_GT(std::fabs(ref.last[0] - 0.5), 1e-3);
  }
}

class DistributedFode : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    PetscOptionsSetValue(nullptr, "-fodetest_ksp_type", "gmres");
    PetscOptionsSetValue(nullptr, "-fodetest_pc_type", "jacobi");
  }
};

}  // namespace

TEST_F(DistributedFode, AbmWithMatMatchesOneRankToRoundOff) {
  compare_with_one_rank(ff::FodeMethod::abm, true, false);
}

TEST_F(DistributedFode, TrapezoidalWithMatMatchesOneRankToRoundOff) {
  compare_with_one_rank(ff::FodeMethod::trapezoidal, true, false);
}

TEST_F(DistributedFode, GivenUnevenLayoutMatchesOneRankToRoundOff) {
  compare_with_one_rank(ff::FodeMethod::abm, true, true);
  compare_with_one_rank(ff::FodeMethod::trapezoidal, false, true);
}

// abm beyond its stability limit in the last component only (owned by the last rank):
// every rank throws the same error, with the owner's values in the message.
TEST(DistributedFodeFailure, UnstableComponentOnTheLastRankIsReportedByEveryRank) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ff::FodeProblem p;
  p.global_size = 4 * size;
  p.order = {0.8};
  p.horizon = 1.0;
  p.steps = 64;  // h = 1/64: h^0.8 x 10 = 0.36 is stable, h^0.8 x 1000 = 36 is not
  p.initial = {1.0};
  const PetscInt last = p.global_size - 1;
  ff::FodeRhs rhs;
  PetscInt first = 0;
  const PetscInt local = ff::fode_local_size(MPI_COMM_WORLD, p.global_size);
  MPI_Exscan(&local, &first, 1, MPIU_INT, MPI_SUM, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) first = 0;
  rhs.function = [first, local, last](double, const double* y, double* f) {
    for (PetscInt k = 0; k < local; ++k) f[k] = (first + k == last ? -1000.0 : -10.0) * y[k];
  };
  ff::FodeOptions o;
  o.method = ff::FodeMethod::abm;
  ff::FodeSolver s(MPI_COMM_WORLD, p, rhs, o);
  std::string what = "no error";
  try {
    s.solve();
  } catch (const fracmfg::core::CollectiveError& e) {
    what = e.what();
  }
  const std::string expected = "fode: method abm is unstable at this step size (h = 0.015625): |y" +
                               std::to_string(last + 1) + "| grew to ";
  EXPECT_EQ(what.rfind(expected, 0), 0u) << what;
  EXPECT_NE(what.find("its initial 1, although y" + std::to_string(last + 1)), std::string::npos)
      << what;
  EXPECT_EQ(what.find("grew to 0,"), std::string::npos) << what;
  EXPECT_NE(what.find("at step 1 (t = 0.015625), component y" + std::to_string(last + 1) +
                      " (global index " + std::to_string(last) + ")"),
            std::string::npos)
      << what;
}

// The Newton systems by unpreconditioned GMRES allowed one iteration: KSP stops with
// DIVERGED_ITS on every rank, and with -ksp_error_if_not_converged PETSc raises the error on
// every rank. Either way every rank throws the same CollectiveError (exit codes numerical
// and petsc), so fracmfg prints it once and does not abort the job.
namespace {

std::string fode_linear_failure(bool error_if_not_converged, fracmfg::ExitCode& code) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const PetscInt n = 8 * size;
  const PetscInt local = ff::fode_local_size(MPI_COMM_WORLD, n);
  Mat a = laplacian(MPI_COMM_WORLD, local, n);
  PetscOptionsSetValue(nullptr, "-fodefail_ksp_type", "gmres");
  PetscOptionsSetValue(nullptr, "-fodefail_pc_type", "none");
  PetscOptionsSetValue(nullptr, "-fodefail_ksp_max_it", "1");
  if (error_if_not_converged) {
    PetscOptionsSetValue(nullptr, "-fodefail_ksp_error_if_not_converged", nullptr);
  }
  ff::FodeProblem p;
  p.global_size = n;
  p.order = {0.5};
  p.horizon = 4.0;
  p.steps = 4;
  p.initial.resize(static_cast<std::size_t>(local));
  for (PetscInt k = 0; k < local; ++k) p.initial[static_cast<std::size_t>(k)] = 1.0 + 0.1 * k;
  ff::FodeRhs rhs;
  rhs.linear = a;
  ff::FodeOptions o;
  o.method = ff::FodeMethod::trapezoidal;
  o.options_prefix = "fodefail_";
  std::string what = "no error";
  code = fracmfg::ExitCode::success;
  try {
    ff::FodeSolver s(MPI_COMM_WORLD, p, rhs, o);
    s.solve();
  } catch (const fracmfg::core::CollectiveError& e) {
    what = e.what();
    code = e.exit_code();
  }
  MatDestroy(&a);
  for (const char* name : {"-fodefail_ksp_type", "-fodefail_pc_type", "-fodefail_ksp_max_it",
                           "-fodefail_ksp_error_if_not_converged"}) {
    PetscOptionsClearValue(nullptr, name);
  }
  return what;
}

}  // namespace

TEST(DistributedFodeFailure, DivergedLinearSolveIsOneCollectiveErrorOnEveryRank) {
  fracmfg::ExitCode code{};
  const std::string what = fode_linear_failure(false, code);
  EXPECT_EQ(code, fracmfg::ExitCode::numerical) << what;
  EXPECT_EQ(what.rfind("fode: the Newton linear solve failed at step 1 ", 0), 0u) << what;
  EXPECT_NE(what.find("KSP reason DIVERGED_ITS after 1 iterations"), std::string::npos) << what;
}

TEST(DistributedFodeFailure, ErrorIfNotConvergedIsOneCollectiveErrorOnEveryRank) {
  fracmfg::ExitCode code{};
  const std::string what = fode_linear_failure(true, code);
  EXPECT_EQ(code, fracmfg::ExitCode::petsc) << what;
  EXPECT_NE(what.find("KSPSolve has not converged"), std::string::npos) << what;
}
