// mfg::Field on 3D domains: samples on three axes are trilinear between their points (exact
// at them), deck formulas see z, and a formula or samples of the wrong dimension are refused.
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

TEST(Mfg3dField, ThreeDimensionalSamplesAreTrilinear) {
  // A trilinear function is reproduced exactly between the points of a 5 x 3 x 4 sample grid
  // on the reflecting domain [0, 1] x [0, 2] x [0, 0.8] (cell centres), and values beyond the
  // outermost centres are held.
  const auto g = domain({1.0, 2.0, 0.8}, MfgConfig::Domain::Boundary::reflecting);
  auto fn = [](double x, double y, double z) {
    return 1 + 2 * x + 3 * y - z + 4 * x * y + 0.5 * y * z - x * z + 2 * x * y * z;
  };
  auto centre = [](int i, double length, int n) { return (i + 0.5) * length / n; };
  std::vector<double> values;
  for (int l = 0; l < 4; ++l) {
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 5; ++i) {
        values.push_back(fn(centre(i, 1.0, 5), centre(j, 2.0, 3), centre(l, 0.8, 4)));
      }
    }
  }
  const auto f = mfg::Field::samples({5, 3, 4}, values);
  const std::vector<double> x = {0.15, 0.62, centre(2, 1.0, 5), 0.95};
  const std::vector<double> y = {0.5, 1.3, centre(1, 2.0, 3), 1.0};
  const std::vector<double> z = {0.15, 0.55, centre(3, 0.8, 4), 0.79};
  std::vector<double> out(x.size());
  f.evaluate(g, x.size(), x.data(), y.data(), z.data(), 0.0, out.data());
  EXPECT_NEAR(out[0], fn(x[0], y[0], z[0]), 1e-13);
  EXPECT_NEAR(out[1], fn(x[1], y[1], z[1]), 1e-13);
  EXPECT_EQ(out[2], values[(3 * 3 + 1) * 5 + 2]);  // a sample point: that value exactly
  // x = 0.95 and z = 0.79 lie beyond the outermost centres (0.9, 0.7): held there.
  EXPECT_NEAR(out[3], fn(0.9, 1.0, 0.7), 1e-13);
}

TEST(Mfg3dField, DeckFormulasSeeZ) {
  MfgConfig c;
  c.domain.length = {1.0, 1.0, 1.0};
  c.grid.points = {4, 4, 4};
  c.coupling.potential = {"x + 10*y + 100*z", {"x", "y", "z"}};
  c.sources.hjb = {"z * t", {"x", "y", "z", "t"}};
  const mfg::Problem p = mfg::problem_from_config(c);
  const auto g = domain({1.0, 1.0, 1.0}, MfgConfig::Domain::Boundary::periodic);
  const std::vector<double> x = {0.25}, y = {0.5}, z = {0.75};
  double v = 0.0;
  p.coupling.potential.evaluate(g, 1, x.data(), y.data(), z.data(), 0.0, &v);
  EXPECT_DOUBLE_EQ(v, 0.25 + 5.0 + 75.0);
  p.sources.hjb.evaluate(g, 1, x.data(), y.data(), z.data(), 2.0, &v);
  EXPECT_DOUBLE_EQ(v, 1.5);
  // Without z (a 1D or 2D domain) z is 0.
  p.coupling.potential.evaluate(g, 1, x.data(), y.data(), 0.0, &v);
  EXPECT_DOUBLE_EQ(v, 0.25 + 5.0);
}

TEST(Mfg3dField, SamplesOfAnotherDimensionAreRefused) {
  EXPECT_THROW(mfg::Field::samples({2, 2, 2, 2}, std::vector<double>(16, 1.0)), fracmfg::Error);
  const auto g = domain({1.0, 1.0, 1.0}, MfgConfig::Domain::Boundary::periodic);
  const auto f = mfg::Field::samples({2, 2}, {1.0, 2.0, 3.0, 4.0}).named("host.density");
  const std::vector<double> p = {0.5};
  double v = 0.0;
  try {
    f.evaluate(g, 1, p.data(), p.data(), p.data(), 0.0, &v);
    FAIL() << "2D samples on a 3D domain were accepted";
  } catch (const fracmfg::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "host.density: samples on 2 axes for a domain of dimension 3");
  }
}

TEST(Mfg3dGrid, ThreeAxesMakeAThreeDimensionalGrid) {
  MfgConfig::Domain d;
  d.length = {1.0, 2.0, 0.5};
  MfgConfig::Grid p;
  p.points = {10, 8, 5};
  const mfg::Grid g = mfg::Grid::make(d, p);
  EXPECT_EQ(g.dim, 3);
  EXPECT_EQ(g.size(), 400);
  EXPECT_DOUBLE_EQ(g.cell_volume(), 0.1 * 0.25 * 0.1);
  EXPECT_EQ(g.points_text(), "10 x 8 x 5");
  d.length = {1.0, 1.0, 1.0, 1.0};
  p.points = {4, 4, 4, 4};
  EXPECT_THROW(mfg::Grid::make(d, p), fracmfg::Error);
}

}  // namespace
