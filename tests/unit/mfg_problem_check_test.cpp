// mfg::check_problem: a Problem built in code is held to the ranges a deck allows, with a
// message naming the Problem member; a deck's problem always passes.
#include <gtest/gtest.h>

#include <string>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/mfg/problem.hpp"

namespace {

namespace mfg = fracmfg::mfg;

std::string error_of(const mfg::Problem& p) {
  try {
    mfg::check_problem(p);
  } catch (const fracmfg::core::CollectiveError& e) {
    EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::usage);
    return e.what();
  }
  return "no error";
}

TEST(MfgProblemCheck, DefaultsAndDeckProblemsPass) {
  EXPECT_EQ(error_of(mfg::Problem{}), "no error");
  EXPECT_EQ(error_of(mfg::problem_from_config(fracmfg::io::MfgConfig{})), "no error");
}

TEST(MfgProblemCheck, NumbersOutOfTheirDeckRangesNameTheMember) {
  mfg::Problem p;
  p.diffusion = -0.5;
  EXPECT_EQ(error_of(p), "problem.diffusion: must be >= 0, but is -0.5");
  p = {};
  p.iteration.damping = 0.0;
  EXPECT_EQ(error_of(p), "problem.iteration.damping: must be in (0, 1], but is 0");
  p = {};
  p.coupling.type = mfg::Problem::Coupling::Type::nonlocal;
  p.coupling.width = 0.0;
  EXPECT_EQ(error_of(p), "problem.coupling.width: must be > 0, but is 0");
  p = {};
  p.iteration.max_iterations = 0;
  EXPECT_EQ(error_of(p), "problem.iteration.max_iterations: must be >= 1, but is 0");
  p = {};
  p.iteration.coarse_tolerance = 0.7;
  EXPECT_EQ(error_of(p), "problem.iteration.coarse_tolerance: must be in [0, 0.5], but is 0.7");
  p = {};
  p.iteration.coarse_levels = -2;
  EXPECT_EQ(error_of(p), "problem.iteration.coarse_levels: must be in [-1, 8], but is -2");
  p = {};
  p.iteration.coarse_points = 3;
  EXPECT_EQ(error_of(p),
            "problem.iteration.coarse_points: must be 0 (automatic) or >= 4, but is 3");
}

// Grid sequencing's coarse levels: max(tolerance, coarse_tolerance), the method's default at 0.
TEST(MfgProblemCheck, CoarseLevelToleranceFollowsTheMethod) {
  using Method = fracmfg::io::MfgConfig::Iteration::Method;
  mfg::Problem p;
  p.iteration.tolerance = 1e-8;
  p.iteration.method = Method::fixed_point;
  EXPECT_EQ(mfg::coarse_level_tolerance(p), 1e-3);
  p.iteration.method = Method::automatic;  // a 1D game: the two-grid iteration's
  EXPECT_EQ(mfg::coarse_level_tolerance(p), 1e-2);
  p.iteration.method = Method::newton;
  EXPECT_EQ(mfg::coarse_level_tolerance(p), 1e-3);
  p.iteration.method = Method::two_grid;
  EXPECT_EQ(mfg::coarse_level_tolerance(p), 1e-2);
  p.iteration.coarse_tolerance = 1e-4;
  EXPECT_EQ(mfg::coarse_level_tolerance(p), 1e-4);
  p.iteration.tolerance = 1e-3;  // never below the fine tolerance
  EXPECT_EQ(mfg::coarse_level_tolerance(p), 1e-3);
}

// The coarse levels and the two-grid coarse grid at their defaults (-1, 0): no coarse start for
// the fixed point and Newton; under the two-grid iteration the halvings that keep at least the
// coarse grid, whose size is 128, or points / 20 with a coarse start; explicit values as given.
TEST(MfgProblemCheck, CoarseLevelsAndCoarsePointsFollowTheMethodAndTheGrid) {
  using Method = fracmfg::io::MfgConfig::Iteration::Method;
  mfg::Problem p;
  p.grid.points = {10000};
  EXPECT_EQ(p.iteration.coarse_levels, -1);
  EXPECT_EQ(p.iteration.coarse_points, 0);
  EXPECT_EQ(p.iteration.method, Method::automatic);
  EXPECT_EQ(mfg::coarse_levels(p), 4);  // auto is the two-grid iteration here (below)
  p.iteration.method = Method::fixed_point;
  EXPECT_EQ(mfg::coarse_levels(p), 0);
  p.iteration.method = Method::newton;
  EXPECT_EQ(mfg::coarse_levels(p), 0);
  p.iteration.method = Method::two_grid;
  EXPECT_EQ(mfg::coarse_points(p), 500);  // 10000 / 20
  EXPECT_EQ(mfg::coarse_levels(p), 4);    // 5000, 2500, 1250, 625 >= 500; 312 < 500
  p.iteration.coarse_levels = 0;          // the cold start: the default coarse grid is 128
  EXPECT_EQ(mfg::coarse_points(p), 128);
  p.iteration.coarse_levels = 2;
  EXPECT_EQ(mfg::coarse_points(p), 500);
  EXPECT_EQ(mfg::coarse_levels(p), 2);
  p.iteration.coarse_levels = -1;
  p.iteration.coarse_points = 1000;  // explicit: levels down to it
  EXPECT_EQ(mfg::coarse_points(p), 1000);
  EXPECT_EQ(mfg::coarse_levels(p), 3);  // 5000, 2500, 1250
  p.iteration.coarse_points = 0;
  p.grid.points = {2000};  // 2000 / 20 < 128: levels down to 128 points (1000, 500, 250)
  EXPECT_EQ(mfg::coarse_points(p), 128);
  EXPECT_EQ(mfg::coarse_levels(p), 3);
  p.grid.points = {255};  // fewer than 2 x 128 points: no coarse start
  EXPECT_EQ(mfg::coarse_levels(p), 0);
  p.grid.points = {1 << 20};            // at most 8 levels
  EXPECT_EQ(mfg::coarse_levels(p), 4);  // 52428 points: 2^20 >> 5 = 32768 < 52428
  p.iteration.coarse_points = 4;
  EXPECT_EQ(mfg::coarse_levels(p), 8);
  p.grid.points = {600, 300};  // every axis keeps the coarse grid (the finest sets its size)
  p.iteration.coarse_points = 0;
  EXPECT_EQ(mfg::coarse_points(p), 128);
  EXPECT_EQ(mfg::coarse_levels(p), 1);  // 300 / 2 = 150 >= 128, 75 < 128
}

// Under auto in 2D and 3D the fixed point at its default settings starts from every coarser
// grid of at least 16 points per axis (its damping adapts, and a stall is cheapest there);
// not where a setting of the fixed point is tuned, an obstacle stands or the method is named.
TEST(MfgProblemCheck, AutoStartsTheFixedPointFromCoarserGridsIn2DAnd3D) {
  using Method = fracmfg::io::MfgConfig::Iteration::Method;
  mfg::Problem p;
  p.domain.length = {1.0, 1.0};
  p.grid.points = {256, 256};
  ASSERT_EQ(mfg::resolved_method(p), Method::fixed_point);
  EXPECT_EQ(mfg::coarse_levels(p), 4);  // 128, 64, 32, 16
  EXPECT_EQ(mfg::coarse_level_tolerance(p), 1e-3);
  p.grid.points = {48, 48};
  EXPECT_EQ(mfg::coarse_levels(p), 1);  // 24; 12 < 16
  p.grid.points = {31, 256};
  EXPECT_EQ(mfg::coarse_levels(p), 0);  // every axis keeps 16
  p.grid.points = {1 << 14, 1 << 14};
  EXPECT_EQ(mfg::coarse_levels(p), 8);  // at most 8
  p.grid.points = {256, 256};
  p.iteration.damping = 0.3;
  EXPECT_EQ(mfg::coarse_levels(p), 0);
  p.iteration.damping = fracmfg::io::MfgConfig::Iteration::kDefaultDamping;
  p.iteration.anderson = 3;
  EXPECT_EQ(mfg::coarse_levels(p), 0);
  p.iteration.anderson = 0;
  p.iteration.method = Method::fixed_point;
  EXPECT_EQ(mfg::coarse_levels(p), 0);
  p.iteration.method = Method::automatic;
  p.iteration.coarse_levels = 2;  // explicit values as given
  EXPECT_EQ(mfg::coarse_levels(p), 2);
  p.iteration.coarse_levels = -1;
  p.obstacle = mfg::Field::function([](double x, double) { return 0.1 - x; });
  EXPECT_EQ(mfg::coarse_levels(p), 0);
  p.obstacle = mfg::Problem{}.obstacle;
  p.domain.length = {1.0, 1.0, 1.0};
  p.grid.points = {64, 64, 64};
  EXPECT_EQ(mfg::coarse_levels(p), 2);  // 32, 16
  p.domain.length = {1.0};  // 1D: the two-grid iteration's rule, or none for the fixed point
  p.grid.points = {1024};
  p.hamiltonian.type = mfg::Problem::Hamiltonian::Type::congestion;
  ASSERT_EQ(mfg::resolved_method(p), Method::fixed_point);
  EXPECT_EQ(mfg::coarse_levels(p), 0);
}

}  // namespace

// iteration.method auto: the two-grid iteration where the deck would allow it and the fixed
// point's own settings are untouched; the fixed point otherwise; explicit methods as given.
TEST(MfgProblemCheck, AutoIsTheTwoGridIterationWhereItAppliesElseTheFixedPoint) {
  using Method = fracmfg::io::MfgConfig::Iteration::Method;
  using P = mfg::Problem;
  const P base = [] {
    P p;
    p.domain.length = {1.0};
    p.grid.points = {200};
    return p;
  }();
  ASSERT_EQ(base.iteration.method, Method::automatic);
  EXPECT_EQ(mfg::resolved_method(base), Method::two_grid);
  auto with = [&](auto change) {
    P p = base;
    change(p);
    return mfg::resolved_method(p);
  };
  EXPECT_EQ(with([](P& p) { p.hamiltonian.type = P::Hamiltonian::Type::power; }), Method::two_grid);
  // Where two_grid does not apply.
  EXPECT_EQ(with([](P& p) {
              p.domain.length = {1.0, 1.0};
              p.grid.points = {64, 64};
            }),
            Method::fixed_point);
  EXPECT_EQ(with([](P& p) {
              p.domain.length = {1.0, 1.0, 1.0};
              p.grid.points = {16, 16, 16};
            }),
            Method::fixed_point);
  EXPECT_EQ(with([](P& p) { p.diffusion_order = 1.5; }), Method::fixed_point);
  EXPECT_EQ(with([](P& p) { p.hamiltonian.type = P::Hamiltonian::Type::congestion; }),
            Method::fixed_point);
  EXPECT_EQ(with([](P& p) {
              p.fokker_planck.method = fracmfg::io::MfgConfig::FokkerPlanck::Method::particles;
            }),
            Method::fixed_point);
  EXPECT_EQ(with([](P& p) { p.obstacle = mfg::Field::constant(1.0); }), Method::fixed_point);
  // The fixed point's own settings changed: the fixed point is asked for.
  EXPECT_EQ(with([](P& p) { p.iteration.damping = 0.3; }), Method::fixed_point);
  EXPECT_EQ(with([](P& p) { p.iteration.anderson = 3; }), Method::fixed_point);
  EXPECT_EQ(with([](P& p) {
              p.iteration.schedule = fracmfg::io::MfgConfig::Iteration::Schedule::fictitious_play;
            }),
            Method::fixed_point);
  // Explicit methods stay.
  for (const Method m : {Method::fixed_point, Method::newton, Method::two_grid}) {
    EXPECT_EQ(with([&](P& p) { p.iteration.method = m; }), m);
  }
}
