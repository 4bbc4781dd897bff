// kernels::kde on the host: the FFT-binned estimate against the exact sum (binning error
// O((dx/h)^2), see fracmfg/kernels/kde.hpp), mass normalisation, periodic wrap-around,
// reflecting images, separable 2D estimates, weights and Silverman's rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/kernels/kde.hpp"

namespace fk = fracmfg::kernels;

namespace {

const double pi = std::acos(-1.0);

// A cell-centred grid of g points on [0, length): x_j = (j + 1/2) dx.
fk::KdeAxis cell_axis(std::int64_t g, double length, double h, fk::KdeBoundary boundary) {
  fk::KdeAxis a;
  a.spacing = length / static_cast<double>(g);
  a.origin = 0.5 * a.spacing;
  a.points = g;
  a.boundary = boundary;
  a.bandwidth = h;
  return a;
}

std::vector<double> normal_samples(std::size_t n, double mean, double sd, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(mean, sd);
  std::vector<double> x(n);
  for (auto& v : x) v = d(rng);
  return x;
}

std::vector<double> run(fk::KdeFn* fn, const fk::KdeGrid& grid, const fk::KdeSamples& s,
                        const fk::KdeOptions& opt = {}) {
  std::vector<double> f(static_cast<std::size_t>(grid.size()), -1.0);
  fn(grid, s, f.data(), opt);
  return f;
}

double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// max |binned - exact| / max |exact|
double binned_error(const fk::KdeGrid& grid, const fk::KdeSamples& s) {
  const auto fb = run(fk::kde_binned_host, grid, s);
  const auto fe = run(fk::kde_exact_host, grid, s);
  return max_diff(fb, fe) / max_abs(fe);
}

double sum(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return s;
}

const char* name(fk::KdeBoundary b) {
  return b == fk::KdeBoundary::open         ? "open"
         : b == fk::KdeBoundary::reflecting ? "reflecting"
                                            : "periodic";
}

}  // namespace

TEST(kernels_kde_test, SingleSampleExactSumIsTheNormalisedGaussian) {
  // h = 4 dx: the discrete normalisation equals 1/(sqrt(2 pi) h) to ~1e-130.
  const fk::KdeAxis a = cell_axis(200, 1.0, 4.0 / 200, fk::KdeBoundary::open);
  const double x0 = 0.4321;
  fk::KdeSamples s;
  s.count = 1;
  s.x = &x0;
  const auto f = run(fk::kde_exact_host, fk::kde_grid_1d(a), s);
  const double h = a.bandwidth;
  for (std::int64_t j = 0; j < a.points; ++j) {
    const double u = a.origin + j * a.spacing - x0;
    const double want =
        std::fabs(u) <= 8 * h ? std::exp(-u * u / (2 * h * h)) / (std::sqrt(2 * pi) * h) : 0.0;
    EXPECT_NEAR(f[j], want, 1e-12 * (1.0 / h)) << j;
  }
}

TEST(kernels_kde_test, BinnedMatchesExactWithinTheBinningBound) {
  // 2e4 samples of N(0.5, 0.1) on 256 cells of [0, 1), h = 4 dx. Expected relative error
  // (dx/s)^2 / 12 = 1.2e-4 at the mode (s^2 = 0.1^2 + h^2); asserted below 1e-3.
  const std::int64_t g = 256;
  const double dx = 1.0 / g;
  const auto x = normal_samples(20000, 0.5, 0.1, 11);
  fk::KdeSamples s;
  s.count = static_cast<std::int64_t>(x.size());
  s.x = x.data();
  for (const auto b :
       {fk::KdeBoundary::open, fk::KdeBoundary::reflecting, fk::KdeBoundary::periodic}) {
    SCOPED_TRACE(name(b));
    const fk::KdeAxis a = cell_axis(g, 1.0, 4 * dx, b);
    const fk::KdeGrid grid = fk::kde_grid_1d(a);
    const auto fb = run(fk::kde_binned_host, grid, s);
    const auto fe = run(fk::kde_exact_host, grid, s);
    EXPECT_LT(max_diff(fb, fe) / max_abs(fe), 1e-3);
    // The worst-case bound W (dx/h)^2 K(0) / 8 holds pointwise.
    const double k0 = 1.0 / (std::sqrt(2 * pi) * a.bandwidth);
    EXPECT_LE(max_diff(fb, fe), s.count * (1.0 / 16.0) * k0 / 8.0);
  }
}

TEST(kernels_kde_test, WorstCaseBinningBoundHoldsForOneSampleMidCell) {
  // A sample half-way between two grid points is the worst case of linear interpolation.
  for (const double ratio : {1.0, 2.0, 4.0}) {
    const fk::KdeAxis a = cell_axis(128, 1.0, ratio / 128, fk::KdeBoundary::periodic);
    const double x0 = a.origin + 60.5 * a.spacing;
    fk::KdeSamples s;
    s.count = 1;
    s.x = &x0;
    const auto fb = run(fk::kde_binned_host, fk::kde_grid_1d(a), s);
    const auto fe = run(fk::kde_exact_host, fk::kde_grid_1d(a), s);
    const double k0 = 1.0 / (std::sqrt(2 * pi) * a.bandwidth);
    const double bound = k0 / (8.0 * ratio * ratio);
    EXPECT_LE(max_diff(fb, fe), bound) << ratio;
    EXPECT_GT(max_diff(fb, fe), 0.3 * bound) << ratio;  // and it is nearly attained
  }
}

TEST(kernels_kde_test, BinningErrorDecreasesAsSpacingSquared) {
  // Fixed samples and h = 0.03; dx from h/3.8 down to h/61. The error is (dx/h)^2 times a
  // factor that fluctuates with the samples' positions inside the cells, so the order is
  // read off a least-squares fit over five refinements.
  const auto x = normal_samples(5000, 0.5, 0.12, 5);
  fk::KdeSamples s;
  s.count = static_cast<std::int64_t>(x.size());
  s.x = x.data();
  const double h = 0.03;
  std::vector<double> log_dx, log_err;
  for (const std::int64_t g : {128, 256, 512, 1024, 2048}) {
    const fk::KdeAxis a = cell_axis(g, 1.0, h, fk::KdeBoundary::periodic);
    log_dx.push_back(std::log(a.spacing));
    log_err.push_back(std::log(binned_error(fk::kde_grid_1d(a), s)));
  }
  const double n = static_cast<double>(log_dx.size());
  const double mx = sum(log_dx) / n;
  const double my = sum(log_err) / n;
  double sxy = 0.0;
  double sxx = 0.0;
  for (std::size_t i = 0; i < log_dx.size(); ++i) {
    sxy += (log_dx[i] - mx) * (log_err[i] - my);
    sxx += (log_dx[i] - mx) * (log_dx[i] - mx);
  }
  const double order = sxy / sxx;
  EXPECT_GT(order, 1.8);
  EXPECT_LT(order, 2.2);
  // Each single refinement still gains at least a factor 2.5.
  for (std::size_t i = 1; i < log_err.size(); ++i) {
    EXPECT_GT(log_err[i - 1] - log_err[i], std::log(2.5)) << "refinement " << i;
  }
}

TEST(kernels_kde_test, MassEqualsTotalWeightForPeriodicAndReflectingAxes) {
  // Samples everywhere, also outside the domain and right at its ends, weighted.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-0.3, 1.3);
  std::uniform_real_distribution<double> wd(0.1, 2.0);
  const std::size_t n = 3000;
  std::vector<double> x(n), y(n), w(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = u(rng);
    y[i] = u(rng);
    w[i] = wd(rng);
  }
  x[0] = 0.0;
  x[1] = 1.0;
  x[2] = 1.0 - 1e-17;
  const double total = sum(w);
  fk::KdeSamples s;
  s.count = static_cast<std::int64_t>(n);
  s.x = x.data();
  s.y = y.data();
  s.weight = w.data();
  for (const auto b : {fk::KdeBoundary::reflecting, fk::KdeBoundary::periodic}) {
    SCOPED_TRACE(name(b));
    for (const double h : {0.5 / 100, 0.02, 0.3, 2.0}) {  // down to h < dx and beyond L
      const fk::KdeAxis a = cell_axis(100, 1.0, h, b);
      const auto f = run(fk::kde_binned_host, fk::kde_grid_1d(a), s);
      EXPECT_NEAR(sum(f) * a.spacing, total, 1e-12 * total) << "h " << h;
      const fk::KdeAxis ay = cell_axis(60, 1.0, 1.5 * h, b);
      const auto f2 = run(fk::kde_binned_host, fk::kde_grid_2d(a, ay), s);
      EXPECT_NEAR(sum(f2) * a.spacing * ay.spacing, total, 1e-12 * total) << "h " << h;
    }
  }
  // Open axes lose the mass beyond the grid, never gain.
  const fk::KdeAxis open = cell_axis(100, 1.0, 0.02, fk::KdeBoundary::open);
  const auto f = run(fk::kde_binned_host, fk::kde_grid_1d(open), s);
  EXPECT_LT(sum(f) * open.spacing, total);
  EXPECT_GT(sum(f) * open.spacing, 0.5 * total);
}

TEST(kernels_kde_test, OpenAxisKeepsAllMassOfSamplesFarFromTheEnds) {
  const auto x = normal_samples(4000, 0.5, 0.05, 9);
  fk::KdeSamples s;
  s.count = static_cast<std::int64_t>(x.size());
  s.x = x.data();
  const fk::KdeAxis a = cell_axis(200, 1.0, 0.01, fk::KdeBoundary::open);
  const auto f = run(fk::kde_binned_host, fk::kde_grid_1d(a), s);
  EXPECT_NEAR(sum(f) * a.spacing, 4000.0, 1e-9);
}

TEST(kernels_kde_test, PeriodicSampleNearLengthContributesNearZero) {
  const std::int64_t g = 100;
  fk::KdeAxis a;
  a.origin = 0.0;
  a.spacing = 1.0 / g;
  a.points = g;
  a.bandwidth = 3 * a.spacing;
  a.boundary = fk::KdeBoundary::periodic;
  const double dx = a.spacing;
  const double near_end = 1.0 - 0.3 * dx;  // 0.3 dx left of x = L, which is x_0
  fk::KdeSamples s;
  s.count = 1;
  s.x = &near_end;
  const auto fe = run(fk::kde_exact_host, fk::kde_grid_1d(a), s);
  const auto fb = run(fk::kde_binned_host, fk::kde_grid_1d(a), s);
  const double c = 1.0 / (std::sqrt(2 * pi) * a.bandwidth);
  const auto k = [&](double u) { return c * std::exp(-u * u / (2 * a.bandwidth * a.bandwidth)); };
  EXPECT_NEAR(fe[0], k(0.3 * dx), 1e-12 * c);      // through the wrap
  EXPECT_NEAR(fe[g - 1], k(0.7 * dx), 1e-12 * c);  // directly
  EXPECT_NEAR(fe[1], k(1.3 * dx), 1e-12 * c);
  const double bound = c * std::pow(dx / a.bandwidth, 2) / 8;
  EXPECT_LE(max_diff(fb, fe), bound);
  EXPECT_GT(fb[0], fb[g - 2]);
  // The same sample one period to the left gives the same estimate.
  const double shifted = near_end - 1.0;
  s.x = &shifted;
  EXPECT_LE(max_diff(run(fk::kde_binned_host, fk::kde_grid_1d(a), s), fb), 1e-12 * c);
  EXPECT_LE(max_diff(run(fk::kde_exact_host, fk::kde_grid_1d(a), s), fe), 1e-12 * c);
  // An open axis gets (almost) nothing at x_0 from it.
  a.boundary = fk::KdeBoundary::open;
  s.x = &near_end;
  EXPECT_LT(run(fk::kde_binned_host, fk::kde_grid_1d(a), s)[0], 1e-12 * c);
}

TEST(kernels_kde_test, ReflectingAxisAddsTheMirrorImage) {
  // A sample 0.2 dx inside the left wall (at -dx/2 of a cell-centred grid): the reflecting
  // estimate is the open one plus the image at 2 w - X.
  const fk::KdeAxis refl = cell_axis(80, 1.0, 2.5 / 80, fk::KdeBoundary::reflecting);
  fk::KdeAxis open = refl;
  open.boundary = fk::KdeBoundary::open;
  const double wall = 0.0;
  const double x0 = wall + 0.2 * refl.spacing;
  fk::KdeSamples s;
  s.count = 1;
  s.x = &x0;
  const auto fr = run(fk::kde_exact_host, fk::kde_grid_1d(refl), s);
  const auto fo = run(fk::kde_exact_host, fk::kde_grid_1d(open), s);
  const double image = 2 * wall - x0;
  fk::KdeSamples si;
  si.count = 1;
  si.x = &image;
  const auto fi = run(fk::kde_exact_host, fk::kde_grid_1d(open), si);
  for (std::size_t j = 0; j < fr.size(); ++j) EXPECT_NEAR(fr[j], fo[j] + fi[j], 1e-12 * fr[0]) << j;
  // The binned estimate mirrors the same way and keeps the mass.
  const auto fb = run(fk::kde_binned_host, fk::kde_grid_1d(refl), s);
  const double k0 = 1.0 / (std::sqrt(2 * pi) * refl.bandwidth);
  EXPECT_LE(max_diff(fb, fr), 2 * k0 * std::pow(refl.spacing / refl.bandwidth, 2) / 8);
  EXPECT_NEAR(sum(fb) * refl.spacing, 1.0, 1e-13);
}

TEST(kernels_kde_test, TwoDimensionalEstimateOfProductSamplesIsTheProductOfOneDimensional) {
  // Samples on a tensor product {x_a} x {y_b} with weights u_a v_b: the 2D estimate is
  // f_x(x) f_y(y) exactly (binning and kernel are both products).
  const auto xa = normal_samples(40, 0.4, 0.15, 21);
  const auto yb = normal_samples(30, 0.6, 0.1, 22);
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> wd(0.5, 1.5);
  std::vector<double> ua(xa.size()), vb(yb.size());
  for (auto& v : ua) v = wd(rng);
  for (auto& v : vb) v = wd(rng);
  std::vector<double> x, y, w;
  for (std::size_t b = 0; b < yb.size(); ++b) {
    for (std::size_t a = 0; a < xa.size(); ++a) {
      x.push_back(xa[a]);
      y.push_back(yb[b]);
      w.push_back(ua[a] * vb[b]);
    }
  }
  const fk::KdeAxis ax = cell_axis(64, 1.0, 0.05, fk::KdeBoundary::periodic);
  const fk::KdeAxis ay = cell_axis(48, 1.0, 0.04, fk::KdeBoundary::reflecting);
  for (fk::KdeFn* fn : {&fk::kde_binned_host, &fk::kde_exact_host}) {
    fk::KdeSamples sx;
    sx.count = static_cast<std::int64_t>(xa.size());
    sx.x = xa.data();
    sx.weight = ua.data();
    fk::KdeSamples sy;
    sy.count = static_cast<std::int64_t>(yb.size());
    sy.x = yb.data();
    sy.weight = vb.data();
    fk::KdeSamples s2;
    s2.count = static_cast<std::int64_t>(x.size());
    s2.x = x.data();
    s2.y = y.data();
    s2.weight = w.data();
    const auto fx = run(fn, fk::kde_grid_1d(ax), sx);
    const auto fy = run(fn, fk::kde_grid_1d(ay), sy);
    const auto f2 = run(fn, fk::kde_grid_2d(ax, ay), s2);
    std::vector<double> product(f2.size());
    for (std::int64_t jy = 0; jy < ay.points; ++jy) {
      for (std::int64_t jx = 0; jx < ax.points; ++jx)
        product[jy * ax.points + jx] = fx[jx] * fy[jy];
    }
    EXPECT_LE(max_diff(f2, product), 1e-12 * max_abs(product));
  }
}

TEST(kernels_kde_test, BinnedMatchesExactIn2D) {
  // Two axes add their binning errors, and in 2D the part of the error that fluctuates with
  // the samples' positions in their cells (relative size ~ (dx/h)^2 / sqrt(N h_x h_y)) reaches
  // 1.4e-3 at h = 4 dx for a few thousand samples; with h = 6 dx the expected relative error
  // at the mode is (dx/s_x)^2/12 + (dy/s_y)^2/12 = 4.2e-4 (s^2 = sd^2 + h^2) plus that
  // fluctuation (measured 6-7e-4 here).
  const auto x = normal_samples(3000, 0.5, 0.15, 31);
  const auto y = normal_samples(3000, 0.45, 0.15, 32);
  fk::KdeSamples s;
  s.count = 3000;
  s.x = x.data();
  s.y = y.data();
  const fk::KdeAxis ax = cell_axis(128, 1.0, 6.0 / 128, fk::KdeBoundary::open);
  const fk::KdeAxis ay = cell_axis(128, 1.0, 6.0 / 128, fk::KdeBoundary::reflecting);
  EXPECT_LT(binned_error(fk::kde_grid_2d(ax, ay), s), 1e-3);
}

TEST(kernels_kde_test, WeightsActLikeRepeatedSamples) {
  const std::vector<double> x{0.21, 0.5, 0.77};
  const std::vector<double> w{3.0, 1.0, 2.0};
  const std::vector<double> repeated{0.21, 0.21, 0.21, 0.5, 0.77, 0.77};
  const fk::KdeAxis a = cell_axis(50, 1.0, 0.05, fk::KdeBoundary::reflecting);
  fk::KdeSamples sw;
  sw.count = 3;
  sw.x = x.data();
  sw.weight = w.data();
  fk::KdeSamples sr;
  sr.count = 6;
  sr.x = repeated.data();
  for (fk::KdeFn* fn : {&fk::kde_binned_host, &fk::kde_exact_host}) {
    const auto fw = run(fn, fk::kde_grid_1d(a), sw);
    const auto fr = run(fn, fk::kde_grid_1d(a), sr);
    EXPECT_LE(max_diff(fw, fr), 1e-12 * max_abs(fr));
  }
}

TEST(kernels_kde_test, KernelIsCutAtTheTruncationRadius) {
  const fk::KdeAxis a = cell_axis(400, 1.0, 0.01, fk::KdeBoundary::open);
  const double x0 = 0.5;
  fk::KdeSamples s;
  s.count = 1;
  s.x = &x0;
  fk::KdeOptions opt;
  opt.truncation = 3.0;
  const auto f = run(fk::kde_exact_host, fk::kde_grid_1d(a), s, opt);
  const auto fb = run(fk::kde_binned_host, fk::kde_grid_1d(a), s, opt);
  for (std::int64_t j = 0; j < a.points; ++j) {
    const double u = std::fabs(a.origin + j * a.spacing - x0);
    if (u > 3.0 * a.bandwidth) {
      EXPECT_EQ(f[j], 0.0) << j;
    } else {
      EXPECT_GT(f[j], 0.0) << j;
    }
    if (u > 3.0 * a.bandwidth + a.spacing) {
      EXPECT_NEAR(fb[j], 0.0, 1e-14 * max_abs(fb)) << j;  // FFT round-off only
    }
  }
  // The truncated kernel is renormalised: the binned mass is still the sample's weight.
  EXPECT_NEAR(sum(fb) * a.spacing, 1.0, 1e-13);
}

TEST(kernels_kde_test, EmptySampleSetGivesZeroDensity) {
  const fk::KdeAxis a = cell_axis(30, 1.0, 0.1, fk::KdeBoundary::periodic);
  fk::KdeSamples s;
  for (fk::KdeFn* fn : {&fk::kde_binned_host, &fk::kde_exact_host}) {
    const auto f = run(fn, fk::kde_grid_1d(a), s);
    EXPECT_EQ(max_abs(f), 0.0);
  }
}

TEST(kernels_kde_test, BadArgumentsAreRejected) {
  const double x0 = 0.5;
  fk::KdeSamples s;
  s.count = 1;
  s.x = &x0;
  std::vector<double> f(100);
  fk::KdeAxis a = cell_axis(100, 1.0, 0.05, fk::KdeBoundary::open);
  fk::KdeGrid g = fk::kde_grid_1d(a);
  g.dim = 3;
  EXPECT_THROW(fk::kde_binned_host(g, s, f.data(), {}), fracmfg::Error);
  a.spacing = 0.0;
  EXPECT_THROW(fk::kde_binned_host(fk::kde_grid_1d(a), s, f.data(), {}), fracmfg::Error);
  a = cell_axis(100, 1.0, 0.0, fk::KdeBoundary::open);
  EXPECT_THROW(fk::kde_exact_host(fk::kde_grid_1d(a), s, f.data(), {}), fracmfg::Error);
  a = cell_axis(100, 1.0, 0.05, fk::KdeBoundary::open);
  EXPECT_THROW(fk::kde_exact_host(fk::kde_grid_1d(a), s, nullptr, {}), fracmfg::Error);
  EXPECT_THROW(fk::kde_binned_host(fk::kde_grid_2d(a, a), s, f.data(), {}),
               fracmfg::Error);  // no y
  fk::KdeOptions opt;
  opt.truncation = 0.5;
  EXPECT_THROW(fk::kde_binned_host(fk::kde_grid_1d(a), s, f.data(), opt), fracmfg::Error);
  opt = fk::KdeOptions{};
  opt.sample_chunks = 0;
  EXPECT_THROW(fk::kde_binned_cuda(fk::kde_grid_1d(a), s, f.data(), opt), fracmfg::Error);
}

TEST(kernels_kde_test, SilvermanRuleMatchesHandComputedValues) {
  // 1..10: sigma = sqrt(8.25), Hazen quartiles 3 and 8 (IQR/1.34 = 3.73 > sigma).
  std::vector<double> x(10);
  for (int i = 0; i < 10; ++i) x[i] = i + 1.0;
  const double want = 0.9 * std::sqrt(8.25) * std::pow(10.0, -0.2);
  EXPECT_NEAR(fk::silverman_bandwidth(x.data(), nullptr, 10), want, 1e-14);
  // Scaling all weights changes nothing.
  std::vector<double> w(10, 2.5);
  EXPECT_NEAR(fk::silverman_bandwidth(x.data(), w.data(), 10), want, 1e-14);
  // An outlier: sigma ~ 399 while IQR/1.34 ~ 188, so the IQR term wins. Hazen positions
  // p_i = (i + 1/2)/5 = 0.1, 0.3, 0.5, 0.7, 0.9: q(0.25) = 0.75, q(0.75) = 3 + 0.25*997.
  std::vector<double> t{0.0, 1.0, 2.0, 3.0, 1000.0};
  const double iqr = (3.0 + 0.25 * 997.0) - 0.75;
  EXPECT_NEAR(fk::silverman_bandwidth(t.data(), nullptr, 5), 0.9 * iqr / 1.34 * std::pow(5.0, -0.2),
              1e-12);
  // Weights: Kish's effective size (sum w)^2 / sum w^2.
  std::vector<double> wu{1.0, 3.0};
  std::vector<double> xu{0.0, 1.0};
  // mean 0.75, sigma^2 = (1*0.5625 + 3*0.0625)/4 = 0.1875; quartiles: p = 1/8, 5/8 ->
  // q(0.25) = 0.25, q(0.75) = 1 -> IQR/1.34 = 0.5597 > sigma; n_eff = 16/10.
  EXPECT_NEAR(fk::silverman_bandwidth(xu.data(), wu.data(), 2),
              0.9 * std::sqrt(0.1875) * std::pow(1.6, -0.2), 1e-14);
  // No spread.
  std::vector<double> same(5, 0.25);
  EXPECT_THROW(fk::silverman_bandwidth(same.data(), nullptr, 5), fracmfg::NumericalError);
  std::vector<double> neg{1.0, -1.0};
  EXPECT_THROW(fk::silverman_bandwidth(xu.data(), neg.data(), 2), fracmfg::Error);
}
