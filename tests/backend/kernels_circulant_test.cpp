// kernels::circulant_batched and kernels::circulant_2d: the CUDA path (cuFFT) against the
// host path (FFTW) for Toeplitz embeddings and plain circulants, one line and many, and for
// 2D block circulants; a failed call leaves the output untouched. Skips with a message where the
// build has no CUDA or the machine no device; the failure modes that need no device are checked
// before skipping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/kernels/circulant.hpp"

namespace fk = fracmfg::kernels;
namespace fe = fracmfg::exec;

namespace {

int device_or_check_failure(std::string& why) {
  const fe::CudaStatus status = fe::probe_cuda();
  std::vector<double> eig(5, 1.0), x(8, 1.0), y(8, 0.0);
  fk::CirculantBatch b;
  b.lines = 1;
  b.length = 8;
  b.fft_length = 8;
  b.eigenvalues = eig.data();
  b.x = x.data();
  b.y = y.data();
  std::vector<double> eig2(2 * (4 / 2 + 1), 1.0);  // a 2 x 4 grid's half spectrum
  fk::Circulant2d p;
  p.nx = 4;
  p.ny = 2;
  p.eigenvalues = eig2.data();
  p.x = x.data();
  p.y = y.data();
  fk::CirculantWorkspace ws;
  if (!status.compiled) {
    EXPECT_THROW(fk::circulant_batched_cuda(b, ws), fracmfg::NotCompiled);
    EXPECT_THROW(fk::circulant_2d_cuda(p, ws), fracmfg::NotCompiled);
    why = "CUDA backend not compiled in this build";
    return -1;
  }
  if (status.devices.empty()) {
    try {
      fk::circulant_batched_cuda(b, ws);
      ADD_FAILURE() << "expected a CUDA error without a device";
    } catch (const fracmfg::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("CUDA", 0), 0u) << e.what();
    }
    for (double v : y) EXPECT_EQ(v, 0.0);  // untouched: a caller falls back to the host
    try {
      fk::circulant_2d_cuda(p, ws);
      ADD_FAILURE() << "expected a CUDA error without a device (2D)";
    } catch (const fracmfg::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("CUDA", 0), 0u) << e.what();
    }
    for (double v : y) EXPECT_EQ(v, 0.0);
    why = "no CUDA device on this machine (" + status.status + ")";
    return -1;
  }
  return status.devices.front().id;
}

}  // namespace

TEST(kernels_circulant_test, CudaMatchesHostForEmbeddingsAndCirculants) {
  std::string why;
  const int device = device_or_check_failure(why);
  if (device < 0) GTEST_SKIP() << why;
  struct Shape {
    std::int64_t lines, m, len;
  };
  for (const Shape sh :
       {Shape{1, 4095, 8192}, Shape{300, 511, 1024}, Shape{7, 1000, 1000}, Shape{1, 3, 5}}) {
    SCOPED_TRACE("lines " + std::to_string(sh.lines) + " m " + std::to_string(sh.m) + " L " +
                 std::to_string(sh.len));
    std::vector<double> eig(static_cast<std::size_t>(sh.len / 2 + 1));
    for (std::size_t k = 0; k < eig.size(); ++k) {
      eig[k] = (1.0 + std::pow(std::sin(0.5 * 3.14159265358979 * k / eig.size()), 1.5)) /
               static_cast<double>(sh.len);
    }
    const auto n = static_cast<std::size_t>(sh.lines * sh.m);
    std::vector<double> x(n), host(n), dev(n);
    for (std::size_t e = 0; e < n; ++e) {
      x[e] = std::sin(0.01 * static_cast<double>(e)) + 0.5;
      host[e] = dev[e] = 0.1 * static_cast<double>(e % 5);
    }
    fk::CirculantBatch b;
    b.lines = sh.lines;
    b.length = sh.m;
    b.fft_length = sh.len;
    b.eigenvalues = eig.data();
    b.x = x.data();
    b.scale = 0.75;
    fk::CirculantOptions o;
    o.cuda_device = device;
    fk::CirculantWorkspace host_ws, dev_ws(o);
    b.y = host.data();
    fk::circulant_batched_host(b, host_ws);
    b.y = dev.data();
    fk::circulant_batched_cuda(b, dev_ws);
    fk::circulant_batched_cuda(b, dev_ws);  // plans from the cache; y accumulates twice
    b.y = host.data();
    fk::circulant_batched_host(b, host_ws);
    for (std::size_t e = 0; e < n; ++e) {
      ASSERT_NEAR(dev[e], host[e], 1e-12 * (1.0 + std::fabs(host[e]))) << e;
    }
  }
}

TEST(kernels_circulant_test, Cuda2dMatchesHost) {
  std::string why;
  const int device = device_or_check_failure(why);
  if (device < 0) GTEST_SKIP() << why;
  for (const auto& shape : {std::pair<std::int64_t, std::int64_t>{512, 384},
                            std::pair<std::int64_t, std::int64_t>{97, 64},
                            std::pair<std::int64_t, std::int64_t>{3, 5}}) {
    const std::int64_t nx = shape.first, ny = shape.second, half = nx / 2 + 1;
    SCOPED_TRACE("nx " + std::to_string(nx) + " ny " + std::to_string(ny));
    std::vector<double> eig(static_cast<std::size_t>(half * ny));
    for (std::int64_t ky = 0; ky < ny; ++ky) {
      for (std::int64_t kx = 0; kx < half; ++kx) {
        eig[static_cast<std::size_t>(ky * half + kx)] =
            1.0 / (1.0 + 0.01 * static_cast<double>(kx * kx + std::min(ky, ny - ky) * ky)) /
            static_cast<double>(nx * ny);
      }
    }
    const auto n = static_cast<std::size_t>(nx * ny);
    std::vector<double> x(n), host(n, 1.0), dev(n, 2.0);
    for (std::size_t e = 0; e < n; ++e) x[e] = std::cos(0.013 * static_cast<double>(e)) + 0.25;
    fk::Circulant2d p;
    p.nx = nx;
    p.ny = ny;
    p.eigenvalues = eig.data();
    p.x = x.data();
    fk::CirculantOptions o;
    o.cuda_device = device;
    fk::CirculantWorkspace host_ws, dev_ws(o);
    for (const double shift : {0.0, 1.5}) {  // the inverse's and the operator's form
      p.shift = shift;
      p.scale = -0.5;
      p.y = host.data();
      fk::circulant_2d_host(p, host_ws);
      p.y = dev.data();
      fk::circulant_2d_cuda(p, dev_ws);
      fk::circulant_2d_cuda(p, dev_ws);  // plans from the cache; y overwritten, not summed
      for (std::size_t e = 0; e < n; ++e) {
        ASSERT_NEAR(dev[e], host[e], 1e-12 * (1.0 + std::fabs(host[e]))) << e;
      }
    }
  }
}
