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
}

// Grid sequencing's coarse levels: max(tolerance, coarse_tolerance), the method's default at 0.
TEST(MfgProblemCheck, CoarseLevelToleranceFollowsTheMethod) {
  using Method = fracmfg::io::MfgConfig::Iteration::Method;
  mfg::Problem p;
  p.iteration.tolerance = 1e-8;
  EXPECT_EQ(mfg::coarse_level_tolerance(p), 1e-3);
  p.iteration.method = Method::newton;
  EXPECT_EQ(mfg::coarse_level_tolerance(p), 1e-3);
  p.iteration.method = Method::two_grid;
  EXPECT_EQ(mfg::coarse_level_tolerance(p), 1e-2);
  p.iteration.coarse_tolerance = 1e-4;
  EXPECT_EQ(mfg::coarse_level_tolerance(p), 1e-4);
  p.iteration.tolerance = 1e-3;  // never below the fine tolerance
  EXPECT_EQ(mfg::coarse_level_tolerance(p), 1e-3);
}

}  // namespace
