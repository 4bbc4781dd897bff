// kernels::history: the CUDA FFT path against the host FFT path (double, 1e-12 relative to
// the scale of each output's terms), for strided batches of many components, one and two
// rules, full and partial squares, and batches split into chunks. Skips with a message where
// the build has no CUDA or the machine no device; the failure modes that need no device are
// checked before skipping.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/frac/weights.hpp"
#include "fracmfg/kernels/history.hpp"

namespace fk = fracmfg::kernels;
namespace fe = fracmfg::exec;

namespace {

struct Square {
  std::int64_t components, stride, m, p;
  int rules;
  std::vector<double> signal;
  std::vector<double> weights[2];
  std::vector<double> spectra[2];
  std::int64_t length;
};

Square make_square(std::int64_t c, std::int64_t stride, std::int64_t m, std::int64_t p, int rules,
                   unsigned seed) {
  Square s{c, stride, m, p, rules, {}, {}, {}, 2 * m};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  s.signal.resize(static_cast<std::size_t>(m * stride));
  for (double& v : s.signal) v = u(rng);
  const double orders[2] = {0.35, 1.65};
  for (int r = 0; r < rules; ++r) {
    s.weights[r] = fracmfg::frac::rl_trapezoid_weights(orders[r], 1e-3,
                                                       static_cast<std::size_t>(s.length + 1));
    s.spectra[r] = fk::history_spectrum(s.weights[r].data(), s.length);
  }
  return s;
}

fk::HistoryBlock block_of(const Square& s, std::vector<double>* out) {
  fk::HistoryBlock b;
  b.components = s.components;
  b.stride = s.stride;
  b.signal_rows = s.m;
  b.output_rows = s.p;
  b.offset = s.m;
  b.rules = s.rules;
  b.signal = s.signal.data();
  for (int r = 0; r < s.rules; ++r) b.output[r] = out[r].data();
  return b;
}

fk::HistorySpectra spectra_of(const Square& s) {
  fk::HistorySpectra sp;
  sp.fft_length = s.length;
  for (int r = 0; r < s.rules; ++r) sp.spectrum[r] = s.spectra[r].data();
  return sp;
}

int device_or_check_failure(std::string& why) {
  const fe::CudaStatus status = fe::probe_cuda();
  const Square s = make_square(3, 3, 8, 8, 1, 1);
  std::vector<double> out[2] = {std::vector<double>(24, 0.0), {}};
  fk::HistoryWorkspace ws;
  if (!status.compiled) {
    EXPECT_THROW(fk::history_fft_cuda(block_of(s, out), spectra_of(s), ws), fracmfg::NotCompiled);
    why = "CUDA backend not compiled in this build";
    return -1;
  }
  if (status.devices.empty()) {
    try {
      fk::history_fft_cuda(block_of(s, out), spectra_of(s), ws);
      ADD_FAILURE() << "expected a CUDA error without a device";
    } catch (const fracmfg::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("CUDA", 0), 0u) << e.what();
    }
    // A failed call leaves the outputs untouched (a caller falls back to the host).
    for (double v : out[0]) EXPECT_EQ(v, 0.0);
    why = "no CUDA device on this machine (" + status.status + ")";
    return -1;
  }
  return status.devices.front().id;
}

}  // namespace

TEST(history_cuda_test, CudaFftSquaresMatchHostFftSquares) {
  std::string why;
  const int device = device_or_check_failure(why);
  if (device < 0) GTEST_SKIP() << why;
  struct Shape {
    std::int64_t c, stride, m, p;
    int rules;
    int chunks;  // the selector's Decision::chunks
  };
  const Shape shapes[] = {
      {1, 1, 4096, 4096, 2, 1},    // scalar equation, top-level square
      {1000, 1003, 64, 64, 2, 1},  // many components, strided rows
      {777, 777, 128, 37, 1, 1},   // partial square at the end of the grid
      {5000, 5000, 32, 32, 2, 7},  // several chunks, a shorter last one
      {3, 3, 256, 256, 1, 5},      // more chunks than components: one component each
  };
  for (const Shape& sh : shapes) {
    SCOPED_TRACE("c " + std::to_string(sh.c) + " m " + std::to_string(sh.m) + " p " +
                 std::to_string(sh.p) + " rules " + std::to_string(sh.rules) + " chunks " +
                 std::to_string(sh.chunks));
    const Square s = make_square(sh.c, sh.stride, sh.m, sh.p, sh.rules, 17);
    fk::HistoryOptions options;
    options.cuda_device = device;
    fk::HistoryWorkspace ws(options);
    std::vector<double> host[2], cuda[2];
    for (int r = 0; r < sh.rules; ++r) {
      host[r].assign(static_cast<std::size_t>(sh.p * sh.stride), 0.5);
      cuda[r] = host[r];
    }
    fk::history_fft_host(block_of(s, host), spectra_of(s), ws);
    fk::history_fft_cuda(block_of(s, cuda), spectra_of(s), ws, sh.chunks);
    for (int r = 0; r < sh.rules; ++r) {
      for (std::int64_t o = 0; o < sh.p; ++o) {
        for (std::int64_t i = 0; i < sh.c; ++i) {
          double scale = 1.0;
          for (std::int64_t j = 0; j < sh.m; ++j) {
            scale += std::fabs(s.weights[r][static_cast<std::size_t>(sh.m + o - j)] *
                               s.signal[static_cast<std::size_t>(j * sh.stride + i)]);
          }
          const auto e = static_cast<std::size_t>(o * sh.stride + i);
          ASSERT_NEAR(cuda[r][e], host[r][e], 1e-12 * scale)
              << "rule " << r << " row " << o << " component " << i;
        }
      }
    }
  }
}
