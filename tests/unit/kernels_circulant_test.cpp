// kernels::circulant_batched and kernels::circulant_2d (host): batched Toeplitz products
// through the circulant embedding, plain circulant products and 2D block-circulant
// products, against dense matrix-vector products; the scale and accumulation; the argument
// checks. The CUDA twin is tests/backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/kernels/circulant.hpp"

namespace fk = fracmfg::kernels;

namespace {

constexpr double kPi = 3.14159265358979323846;

// Eigenvalues lambda_k / L of the symmetric circulant with first column c (L values).
std::vector<double> eigenvalues_of(const std::vector<double>& c) {
  const std::size_t len = c.size();
  std::vector<double> eig(len / 2 + 1, 0.0);
  for (std::size_t k = 0; k < eig.size(); ++k) {
    double s = 0.0;
    for (std::size_t j = 0; j < len; ++j) {
      s += c[j] * std::cos(2.0 * kPi * static_cast<double>(k * j % len) / static_cast<double>(len));
    }
    eig[k] = s / static_cast<double>(len);
  }
  return eig;
}

}  // namespace

TEST(kernels_circulant_test, ToeplitzProductsThroughTheEmbeddingMatchDenseProducts) {
  const std::size_t m = 37, lines = 5, len = 80;  // len >= 2m - 1
  std::vector<double> t(m);
  for (std::size_t k = 0; k < m; ++k) t[k] = 1.0 / (1.0 + static_cast<double>(k * k));
  std::vector<double> c(len, 0.0);
  for (std::size_t k = 0; k < m; ++k) c[k] = t[k];
  for (std::size_t k = 1; k < m; ++k) c[len - k] = t[k];
  const std::vector<double> eig = eigenvalues_of(c);
  std::vector<double> x(lines * m), y(lines * m), ref(lines * m);
  for (std::size_t e = 0; e < x.size(); ++e) {
    x[e] = std::sin(0.3 * static_cast<double>(e));
    y[e] = 0.25 * static_cast<double>(e % 7);
  }
  const double scale = -1.75;
  for (std::size_t b = 0; b < lines; ++b) {
    for (std::size_t i = 0; i < m; ++i) {
      double s = 0.0;
      for (std::size_t j = 0; j < m; ++j) s += t[i > j ? i - j : j - i] * x[b * m + j];
      ref[b * m + i] = y[b * m + i] + scale * s;
    }
  }
  fk::CirculantBatch batch;
  batch.lines = static_cast<std::int64_t>(lines);
  batch.length = static_cast<std::int64_t>(m);
  batch.fft_length = static_cast<std::int64_t>(len);
  batch.eigenvalues = eig.data();
  batch.x = x.data();
  batch.y = y.data();
  batch.scale = scale;
  fk::CirculantWorkspace ws;
  fk::circulant_batched_host(batch, ws);
  for (std::size_t e = 0; e < y.size(); ++e) EXPECT_NEAR(y[e], ref[e], 1e-13) << e;
  // Same shape again (the plans are kept) and a new shape (new plans): still right.
  std::vector<double> y2(lines * m, 0.0);
  batch.y = y2.data();
  batch.scale = 1.0;
  fk::circulant_batched_host(batch, ws);
  batch.lines = 2;
  std::vector<double> y3(2 * m, 0.0);
  batch.y = y3.data();
  fk::circulant_batched_host(batch, ws);
  for (std::size_t e = 0; e < y3.size(); ++e) EXPECT_DOUBLE_EQ(y3[e], y2[e]);
}

TEST(kernels_circulant_test, CirculantOfTheLinesLengthIsTheCirculantProduct) {
  const std::size_t m = 30;  // L = m: the circulant itself
  std::vector<double> c(m);
  for (std::size_t k = 0; k < m; ++k) {
    const std::size_t d = std::min(k, m - k);
    c[k] = d == 0 ? 2.5 : -1.0 / static_cast<double>(d * d);
  }
  const std::vector<double> eig = eigenvalues_of(c);
  std::vector<double> x(m), y(m, 0.0);
  for (std::size_t i = 0; i < m; ++i) x[i] = std::cos(0.7 * static_cast<double>(i)) + 0.1;
  fk::CirculantBatch batch;
  batch.lines = 1;
  batch.length = static_cast<std::int64_t>(m);
  batch.fft_length = static_cast<std::int64_t>(m);
  batch.eigenvalues = eig.data();
  batch.x = x.data();
  batch.y = y.data();
  fk::CirculantWorkspace ws;
  fk::circulant_batched_host(batch, ws);
  for (std::size_t i = 0; i < m; ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < m; ++j) s += c[(i + m - j) % m] * x[j];
    EXPECT_NEAR(y[i], s, 1e-13) << i;
  }
}

TEST(kernels_circulant_test, BadBatchesAreRefusedByName) {
  std::vector<double> eig(9, 1.0), x(16, 1.0), y(16, 0.0);
  fk::CirculantBatch b;
  b.lines = 1;
  b.length = 16;
  b.fft_length = 15;  // shorter than the line
  b.eigenvalues = eig.data();
  b.x = x.data();
  b.y = y.data();
  fk::CirculantWorkspace ws;
  EXPECT_THROW(fk::circulant_batched_host(b, ws), fracmfg::Error);
  b.fft_length = 16;
  b.y = x.data();  // aliasing
  EXPECT_THROW(fk::circulant_batched_host(b, ws), fracmfg::Error);
  b.y = y.data();
  b.eigenvalues = nullptr;
  EXPECT_THROW(fk::circulant_batched_cuda(b, ws), fracmfg::Error);
  b.eigenvalues = eig.data();
  b.lines = -1;
  EXPECT_THROW(fk::circulant_batched_host(b, ws), fracmfg::Error);
  b.lines = 0;  // empty: nothing to do on either backend
  EXPECT_NO_THROW(fk::circulant_batched_host(b, ws));
}

TEST(kernels_circulant_test, TwoDimensionalProductIsTheShiftedBlockCirculantProduct) {
  // y = shift x + scale C x with C[(j, i), (l, k)] = c((j - l) mod ny, (i - k) mod nx) for a
  // symmetric c (c(a, b) = c(-a, -b)), eigenvalues its 2D DFT on the half spectrum; odd and
  // even sizes.
  for (const auto& shape :
       {std::pair<std::size_t, std::size_t>{12, 9}, std::pair<std::size_t, std::size_t>{7, 10}}) {
    const std::size_t nx = shape.first, ny = shape.second, half = nx / 2 + 1;
    SCOPED_TRACE("nx " + std::to_string(nx) + " ny " + std::to_string(ny));
    auto c = [&](std::size_t a, std::size_t b) {
      const double da = static_cast<double>(std::min(a, ny - a));
      const double db = static_cast<double>(std::min(b, nx - b));
      return 1.0 / (1.0 + da * da + 0.5 * db * db);
    };
    std::vector<double> eig(ny * half);
    for (std::size_t ky = 0; ky < ny; ++ky) {
      for (std::size_t kx = 0; kx < half; ++kx) {
        double s = 0.0;
        for (std::size_t a = 0; a < ny; ++a) {
          for (std::size_t b = 0; b < nx; ++b) {
            const double phase = static_cast<double>(ky * a % ny) / static_cast<double>(ny) +
                                 static_cast<double>(kx * b % nx) / static_cast<double>(nx);
            s += c(a, b) * std::cos(2.0 * kPi * phase);
          }
        }
        eig[ky * half + kx] = s / static_cast<double>(nx * ny);
      }
    }
    std::vector<double> x(nx * ny), y(nx * ny, -7.0), ref(nx * ny);
    for (std::size_t e = 0; e < x.size(); ++e) x[e] = std::sin(0.37 * static_cast<double>(e)) + 0.2;
    const double shift = 0.75, scale = 1.25;
    for (std::size_t j = 0; j < ny; ++j) {
      for (std::size_t i = 0; i < nx; ++i) {
        double s = 0.0;
        for (std::size_t l = 0; l < ny; ++l) {
          for (std::size_t k = 0; k < nx; ++k) {
            s += c((j + ny - l) % ny, (i + nx - k) % nx) * x[l * nx + k];
          }
        }
        ref[j * nx + i] = shift * x[j * nx + i] + scale * s;
      }
    }
    fk::Circulant2d p;
    p.nx = static_cast<std::int64_t>(nx);
    p.ny = static_cast<std::int64_t>(ny);
    p.eigenvalues = eig.data();
    p.x = x.data();
    p.y = y.data();  // overwritten: its -7 must not show
    p.shift = shift;
    p.scale = scale;
    fk::CirculantWorkspace ws;
    fk::circulant_2d_host(p, ws);
    for (std::size_t e = 0; e < y.size(); ++e) EXPECT_NEAR(y[e], ref[e], 1e-13) << e;
    // A batched call in between keeps its own plans; the 2D plans are reused after it, and
    // shift 0 gives the plain product.
    std::vector<double> line_eig(nx / 2 + 1, 1.0 / static_cast<double>(nx)), line_y(nx, 0.0);
    fk::CirculantBatch b;
    b.lines = 1;
    b.length = static_cast<std::int64_t>(nx);
    b.fft_length = static_cast<std::int64_t>(nx);
    b.eigenvalues = line_eig.data();
    b.x = x.data();
    b.y = line_y.data();
    fk::circulant_batched_host(b, ws);
    for (std::size_t i = 0; i < nx; ++i) EXPECT_NEAR(line_y[i], x[i], 1e-14) << i;
    std::vector<double> y2(nx * ny, 3.0);
    p.y = y2.data();
    p.shift = 0.0;
    p.scale = 1.0;
    fk::circulant_2d_host(p, ws);
    for (std::size_t e = 0; e < y.size(); ++e) {
      EXPECT_NEAR(shift * x[e] + scale * y2[e], ref[e], 1e-13) << e;
    }
  }
}

TEST(kernels_circulant_test, Bad2dProductsAreRefusedByName) {
  std::vector<double> eig(12, 1.0), x(16, 1.0), y(16, 0.0);
  fk::Circulant2d p;
  p.nx = 4;
  p.ny = 4;
  p.eigenvalues = eig.data();
  p.x = x.data();
  p.y = x.data();  // aliasing
  fk::CirculantWorkspace ws;
  auto message = [&](auto&& call) {
    try {
      call();
    } catch (const fracmfg::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { fk::circulant_2d_host(p, ws); }).find("circulant_2d_host: the output"),
            std::string::npos);
  p.y = y.data();
  p.eigenvalues = nullptr;
  EXPECT_NE(message([&] { fk::circulant_2d_cuda(p, ws); }).find("circulant_2d_cuda: null"),
            std::string::npos);
  p.eigenvalues = eig.data();
  p.ny = -2;
  EXPECT_NE(message([&] { fk::circulant_2d_host(p, ws); }).find("negative size"),
            std::string::npos);
  p.ny = std::int64_t{1} << 20;
  p.nx = std::int64_t{1} << 20;
  EXPECT_NE(message([&] { fk::circulant_2d_host(p, ws); }).find("too large"), std::string::npos);
  p.ny = 0;  // empty: nothing to do
  EXPECT_NO_THROW(fk::circulant_2d_host(p, ws));
}
