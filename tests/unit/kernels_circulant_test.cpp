// kernels::circulant_batched (host): batched Toeplitz products through the circulant
// embedding, and plain circulant products, against dense matrix-vector products; the
// scale and accumulation; the argument checks. The CUDA twin is tests/backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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
