// mfg::Field, the data of an mfg::Problem: constants, callables and samples on a grid of the
// domain. Samples are exact at their own points and (bi)linear in between, wrapping on
// periodic axes and held beyond the outermost points on reflecting ones; a deck formula
// (problem_from_config) keeps its deck key as the field's name.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/io/config.hpp"
#include "fracmfg/mfg/grid.hpp"
#include "fracmfg/mfg/problem.hpp"

namespace {

namespace mfg = fracmfg::mfg;
using fracmfg::io::MfgConfig;

mfg::Grid domain(std::vector<double> length, MfgConfig::Domain::Boundary boundary) {
  MfgConfig::Domain d;
  d.length = std::move(length);
  d.boundary = boundary;
  MfgConfig::Grid g;
  g.points.assign(d.length.size(), 10);
  return mfg::Grid::make(d, g);
}

std::vector<double> at(const mfg::Field& f, const mfg::Grid& g, const std::vector<double>& x,
                       const std::vector<double>& y, double t = 0.0) {
  std::vector<double> out(x.size());
  f.evaluate(g, x.size(), x.data(), y.data(), t, out.data());
  return out;
}

TEST(MfgField, DefaultIsTheConstantZero) {
  const mfg::Field f;
  EXPECT_TRUE(f.is_zero());
  EXPECT_FALSE(f.time_dependent());
  EXPECT_FALSE(mfg::Field::constant(2.0).is_zero());
  const auto g = domain({1.0}, MfgConfig::Domain::Boundary::periodic);
  EXPECT_EQ(at(mfg::Field::constant(2.5), g, {0.1, 0.7}, {0.0, 0.0}),
            (std::vector<double>{2.5, 2.5}));
}

TEST(MfgField, CallablesAreEvaluatedAtThePoints) {
  const auto g = domain({1.0, 2.0}, MfgConfig::Domain::Boundary::reflecting);
  const auto f = mfg::Field::function([](double x, double y) { return x + 10 * y; });
  EXPECT_FALSE(f.time_dependent());
  EXPECT_EQ(at(f, g, {0.25, 0.5}, {1.0, 2.0}), (std::vector<double>{10.25, 20.5}));
  const auto s = mfg::Field::time_function([](double x, double, double t) { return x * t; });
  EXPECT_TRUE(s.time_dependent());
  EXPECT_EQ(at(s, g, {0.25, 0.5}, {0.0, 0.0}, 2.0), (std::vector<double>{0.5, 1.0}));
}

TEST(MfgField, SamplesAreExactAtTheirPointsAndLinearBetweenThem) {
  // 1D periodic, 8 samples of sin at x_i = i / 8.
  const auto g = domain({1.0}, MfgConfig::Domain::Boundary::periodic);
  std::vector<double> values(8);
  for (int i = 0; i < 8; ++i) values[i] = std::sin(2 * M_PI * i / 8.0);
  const auto f = mfg::Field::samples({8}, values);
  std::vector<double> x, y;
  for (int i = 0; i < 8; ++i) {
    x.push_back(i / 8.0);
    y.push_back(0.0);
  }
  EXPECT_EQ(at(f, g, x, y), values);
  // Half way between two points, and across the periodic end (x = 15/16: points 7 and 0).
  const auto mid = at(f, g, {1.0 / 16, 15.0 / 16}, {0.0, 0.0});
  EXPECT_NEAR(mid[0], 0.5 * (values[0] + values[1]), 1e-15);
  EXPECT_NEAR(mid[1], 0.5 * (values[7] + values[0]), 1e-15);
}

TEST(MfgField, ReflectingSamplesHoldTheirValueBeyondTheOutermostPoints) {
  // 4 cell centres 0.125, 0.375, 0.625, 0.875 of [0, 1].
  const auto g = domain({1.0}, MfgConfig::Domain::Boundary::reflecting);
  const auto f = mfg::Field::samples({4}, {1.0, 2.0, 4.0, 8.0});
  const auto v = at(f, g, {0.05, 0.25, 0.375, 0.99}, {0.0, 0.0, 0.0, 0.0});
  EXPECT_EQ(v, (std::vector<double>{1.0, 1.5, 2.0, 8.0}));
}

TEST(MfgField, TwoDimensionalSamplesAreBilinear) {
  // A bilinear function is reproduced exactly between the points of a 5 x 3 sample grid on
  // the periodic domain [0, 1] x [0, 2] (x_i = i / 5, y_j = 2 j / 3).
  const auto g = domain({1.0, 2.0}, MfgConfig::Domain::Boundary::periodic);
  auto fn = [](double x, double y) { return 1 + 2 * x + 3 * y + 4 * x * y; };
  std::vector<double> values;
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 5; ++i) values.push_back(fn(i / 5.0, 2.0 * j / 3.0));
  }
  const auto f = mfg::Field::samples({5, 3}, values);
  const auto v = at(f, g, {0.1, 0.7, 0.4}, {0.3, 1.1, 2.0 / 3.0});
  EXPECT_NEAR(v[0], fn(0.1, 0.3), 1e-13);
  EXPECT_NEAR(v[1], fn(0.7, 1.1), 1e-13);
  EXPECT_EQ(v[2], values[5 + 2]);
}

TEST(MfgField, SamplesOfTheWrongShapeAreRefused) {
  EXPECT_THROW(mfg::Field::samples({4}, {1.0, 2.0}), fracmfg::Error);
  EXPECT_THROW(mfg::Field::samples({}, {}), fracmfg::Error);
  const auto g = domain({1.0, 1.0}, MfgConfig::Domain::Boundary::periodic);
  const auto f = mfg::Field::samples({4}, {1.0, 2.0, 3.0, 4.0}).named("host.density");
  try {
    at(f, g, {0.5}, {0.5});
    FAIL() << "1D samples on a 2D domain were accepted";
  } catch (const fracmfg::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "host.density: samples on 1 axes for a domain of dimension 2");
  }
}

TEST(MfgField, DeckFormulasKeepTheirKeysAndTheirTimeDependence) {
  MfgConfig c;
  c.coupling.potential = {"cos(x)", {"x", "y"}};
  c.sources.hjb = {"x * t", {"x", "y", "t"}};
  c.sources.fp = {"2 * 0", {"x", "y", "t"}};
  const mfg::Problem p = mfg::problem_from_config(c);
  EXPECT_EQ(p.coupling.potential.name(), "mfg.coupling.potential");
  EXPECT_EQ(p.initial_density.name(), "mfg.initial_density");
  EXPECT_FALSE(p.coupling.potential.time_dependent());
  EXPECT_TRUE(p.sources.hjb.time_dependent());
  EXPECT_TRUE(p.sources.fp.is_zero());
  const auto g = domain({1.0}, MfgConfig::Domain::Boundary::periodic);
  EXPECT_EQ(at(p.coupling.potential, g, {0.5}, {0.0}), (std::vector<double>{std::cos(0.5)}));
  EXPECT_EQ(at(p.sources.hjb, g, {0.5}, {0.0}, 3.0), (std::vector<double>{1.5}));
}

}  // namespace
