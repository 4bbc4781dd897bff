// frac::MultiTermSolver on every rank of the test: the reduced system lives on rank 0, the
// other ranks only join the collective calls; solution() is the same on every rank and equal
// to the result on a communicator of rank 0 alone, and the observer shows y on rank 0 only.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "fracmfg/frac/multi_term_solver.hpp"

namespace ff = fracmfg::frac;

namespace {

ff::MultiTermProblem problem() {
  ff::MultiTermProblem p;
  p.orders = {2.0, 1.5, 0.4, 0.0};
  p.coefficients = {1.0, 0.5, 0.3, 1.0};
  p.rhs = [](double t, double y) { return std::cos(t) - 0.2 * y * y * y; };
  p.initial = {1.0, 0.0};
  p.horizon = 3.0;
  p.steps = 300;
  return p;
}

double solve(MPI_Comm comm, ff::FodeMethod method, std::vector<double>* observed) {
  ff::FodeOptions o;
  o.method = method;
  o.history = ff::FodeHistory::fft;
  o.block_size = 16;
  ff::MultiTermSolver s(comm, problem(), o);
  s.solve(
      [&](const ff::FodeStepView& v) {
        if (observed != nullptr && v.local_size > 0) observed->push_back(v.y[0]);
      },
      10);
  return s.solution();
}

}  // namespace

TEST(fode_multi_term_ranks_test, EveryRankGetsTheOneRankSolution) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm alone = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &alone);
  for (auto method : {ff::FodeMethod::abm, ff::FodeMethod::trapezoidal}) {
    std::vector<double> observed;
    const double y = solve(MPI_COMM_WORLD, method, &observed);
    EXPECT_EQ(observed.size(), rank == 0 ? 31u : 0u);
    double reference = 0.0;
    if (rank == 0) {
      reference = solve(alone, method, nullptr);
      EXPECT_EQ(observed.back(), y);
    }
    MPI_Bcast(&reference, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    EXPECT_EQ(y, reference) << ff::to_string(method);
    EXPECT_TRUE(std::isfinite(y));
  }
  if (alone != MPI_COMM_NULL) MPI_Comm_free(&alone);
}
