// The MFG output file: u and m at every `every`-th time level and the last one as
// time-series fields with the grid's origin and spacing (XDMF sidecar next to it), the
// convergence history as replicated arrays /convergence/u and /convergence/m, the mass per
// level; read back on the same ranks, the fields equal the solver's.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "common/mpi_support.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/io/h5_reader.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/petsc_handles.hpp"
#include "mpi/h5_helpers/h5_test_util.hpp"

namespace {

namespace mfg = fracmfg::mfg;
namespace detail = fracmfg::mfg::detail;
using fracmfg::test::max_abs_difference;

struct Case {
  const char* name;
  const char* deck;
};

const Case kCases[] = {
    {"reflecting_1d",
     "problem: mfg\nmfg:\n  domain: {length: [2.0], boundary: reflecting}\n"
     "  grid: {points: [40]}\n  time: {horizon: 0.5, steps: 10}\n  diffusion: 0.05\n"
     "  coupling: {type: log}\n  initial_density: \"exp(-(x-0.5)^2/0.05)\"\n"
     "  terminal_cost: \"(x-1.5)^2\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-8, max_iterations: 100}\n"},
    {"periodic_2d",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 2.0], boundary: periodic}\n"
     "  grid: {points: [12, 20]}\n  time: {horizon: 0.5, steps: 7}\n  diffusion: 0.05\n"
     "  coupling: {type: power, potential: \"sin(2*pi*x)*cos(pi*y)\"}\n"
     "  initial_density: \"1 + 0.5*cos(2*pi*x)\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-8, max_iterations: 100}\n"},
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class MfgOutput : public ::testing::TestWithParam<Case> {};

TEST_P(MfgOutput, FieldsConvergenceAndMassAreWrittenAndReadBack) {
  const auto cfg = fracmfg::io::Deck::from_string(GetParam().deck, "output.yaml").mfg();
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                     fracmfg::test::quiet_logger());
  const auto r = solver.solve();
  ASSERT_TRUE(r.converged);
  const std::string dir = fracmfg::test::scratch_dir(
      MPI_COMM_WORLD, fracmfg::test::per_rank_count("mfg_output", GetParam().name));
  const std::string file = dir + "/game.h5";
  {
    fracmfg::io::H5Writer out(MPI_COMM_WORLD, file, {"mfg", GetParam().deck, ""});
    solver.write(out, 3);
    out.commit();
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/game.xmf"));
  fracmfg::io::H5Reader in(MPI_COMM_WORLD, file);
  // Steps 0, 3, 6, ... and the last.
  std::vector<std::int64_t> want;
  for (int n = 0; n <= solver.steps(); n += 3) want.push_back(n);
  if (want.back() != solver.steps()) want.push_back(solver.steps());
  EXPECT_EQ(in.field_steps("u"), want);
  EXPECT_EQ(in.field_steps("m"), want);
  const auto times = in.field_times("m");
  ASSERT_EQ(times.size(), want.size());
  EXPECT_DOUBLE_EQ(times.back(), cfg.time.horizon);
  // Geometry for the XDMF sidecar.
  const mfg::Grid& g = solver.model().grid();
  const auto origin = in.attribute_doubles("/fields/m/values", "origin");
  const auto spacing = in.attribute_doubles("/fields/m/values", "spacing");
  ASSERT_EQ(origin.size(), static_cast<std::size_t>(g.dim));
  for (int a = 0; a < g.dim; ++a) {
    EXPECT_DOUBLE_EQ(origin[static_cast<std::size_t>(a)], g.origin(a));
    EXPECT_DOUBLE_EQ(spacing[static_cast<std::size_t>(a)], g.spacing(a));
  }
  // Fields equal the solver's.
  auto v = detail::global_vec(solver.model().dm());
  for (std::int64_t n : want) {
    in.read_level("m", n, solver.model().dm(), v.get());
    EXPECT_EQ(max_abs_difference(v.get(), solver.m(static_cast<int>(n))), 0.0) << "m at step " << n;
    in.read_level("u", n, solver.model().dm(), v.get());
    EXPECT_EQ(max_abs_difference(v.get(), solver.u(static_cast<int>(n))), 0.0) << "u at step " << n;
  }
  // Convergence history and its attributes.
  const auto cu = in.read_array("/convergence/u");
  const auto cm = in.read_array("/convergence/m");
  ASSERT_EQ(cu.size(), solver.history().size());
  ASSERT_EQ(cm.size(), solver.history().size());
  for (std::size_t k = 0; k < cu.size(); ++k) {
    EXPECT_EQ(cu[k], solver.history()[k].change_u);
    EXPECT_EQ(cm[k], solver.history()[k].change_m);
  }
  EXPECT_EQ(in.attribute_int64("/convergence", "iterations"), r.iterations);
  // The method as resolved (the decks leave it at auto: the two-grid iteration in 1D, whose
  // records have damping 1, the fixed point at damping 0.5 in 2D).
  const auto method = mfg::resolved_method(mfg::problem_from_config(cfg));
  EXPECT_EQ(in.attribute_string("/convergence", "method"), fracmfg::io::to_string(method));
  EXPECT_EQ(method == fracmfg::io::MfgConfig::Iteration::Method::two_grid,
            cfg.grid.points.size() == 1);
  const auto damping = in.read_array("/convergence/damping");
  ASSERT_EQ(damping.size(), cu.size());
  for (std::size_t k = 0; k < damping.size(); ++k) {
    EXPECT_EQ(damping[k], solver.history()[k].damping);
  }
  EXPECT_EQ(in.attribute_int64("/convergence", "converged"), 1);
  EXPECT_EQ(in.read_array("/mfg/seconds").size(), cu.size());
  const auto mass = in.read_array("/mfg/mass");
  ASSERT_EQ(mass.size(), static_cast<std::size_t>(solver.steps() + 1));
  for (double mm : mass) EXPECT_NEAR(mm, 1.0, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Grids, MfgOutput, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
