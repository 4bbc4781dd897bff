// kernels::circulant_batched: the CUDA path (cuFFT) against the host path (FFTW) for
// Toeplitz embeddings and plain circulants, one line and many; a failed call leaves the
// output untouched. Skips with a message where the build has no CUDA or the machine no
// device; the failure modes that need no device are checked before skipping.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
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
  fk::CirculantWorkspace ws;
  if (!status.compiled) {
    EXPECT_THROW(fk::circulant_batched_cuda(b, ws), fracmfg::NotCompiled);
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
