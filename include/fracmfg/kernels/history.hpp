#pragma once
// kernels::history: history sums of fractional product-integration rules for many components
// at once, node-local.
//
// A fractional ODE solver on the grid t_j = j h needs at every step n, for every component i,
// the history sums of the right-hand side values F[j][i] = f_i(t_j, y_j) with the weights
// K_r(k), k >= 1, of a rule r (predictor, corrector):
//
//     H_r[n][i] = sum_{j<n} K_r(n - j) F[j][i].
//
// frac::FodeSolver splits the (n, j) triangle into squares as Hairer, Lubich & Schlichte
// (SIAM J. Sci. Stat. Comput. 6 (1985) 532-541) do; every square is one call here:
//
//     out_r[o][i] += sum_{s=0}^{min(m, offset + o) - 1} K_r(offset + o - s) f[s][i],
//                    o = 0..p-1, i = 0..c-1,
//
// with f = m consecutive rows of F starting at row j0 and out_r = p consecutive rows of H_r
// starting at row n0 = j0 + offset (offset >= 1). A row holds the c components of one step
// contiguously; consecutive rows are `stride` doubles apart (stride >= c), in the signal and
// in the outputs alike. Up to two rules share one pass over the signal.
//
// Two algorithms:
//   history_direct_host  the sum term by term, O(m p c): the short local sums next to the
//                        diagonal, and the reference. Host only (Kokkos loop over packs of
//                        components, the body in src/kernels/history_item.hpp).
//   history_fft_*        an adjacent square (offset == m, p <= m) by one circular convolution
//                        of length L >= m + p - 1 per component, batched over components:
//                        O(c L log L). With v_k = K_r(k + 1), k = 0..L-1, the wanted outputs are
//                        entries m-1 .. m+p-2 of the circular convolution of v with the signal
//                        padded to L; none of them is touched by wrap-around (the linear
//                        convolution ends at index L + m - 2). The weights enter as their
//                        spectrum (history_spectrum), computed once per square size.
//     history_fft_host   FFTW r2c/c2r plans for the batch (advanced interface, cached in the
//                        workspace), Kokkos loops to pad, multiply and accumulate.
//     history_fft_cuda   cuFFT D2Z/Z2D batched plans on device workspace.options().cuda_device;
//                        copies the signal block to the device (cudaMemcpy2D), the results
//                        back, and adds them to the outputs on the host only once every device
//                        call has succeeded (a failed call leaves the outputs untouched, so a
//                        caller may re-run it on the host). Throws NotCompiled in a build
//                        without CUDA and fracmfg::Error (message starting "CUDA") when the
//                        device cannot run it.
// The FFT path has a normwise error of order u log2(L) ||v||_2 ||f||_2 per output (u the unit
// round-off); both backends compute the same transforms, so they agree to ~1e-15 relative
// to that scale (tests/backend/history_cuda_test.cpp asserts 1e-12).
//
// Every entry point checks its arguments (fracmfg::Error naming the problem). Host entry
// points need Kokkos initialised (core::Environment). Nothing here is collective; all calls
// are synchronous. A HistoryWorkspace belongs to one thread.

#include <cstdint>
#include <memory>
#include <vector>

namespace fracmfg::kernels {

class CudaResources;  // fracmfg/kernels/cuda_resources.hpp

/// One square of the history triangle over caller-owned host memory (see the header comment).
struct HistoryBlock {
  std::int64_t components = 0;             ///< c >= 0
  std::int64_t stride = 0;                 ///< distance between consecutive rows, >= c
  std::int64_t signal_rows = 0;            ///< m >= 0
  std::int64_t output_rows = 0;            ///< p >= 0
  std::int64_t offset = 0;                 ///< n0 - j0 >= 1 (== m for the FFT path)
  int rules = 1;                           ///< 1 or 2
  const double* signal = nullptr;          ///< row s at signal + s * stride
  double* output[2] = {nullptr, nullptr};  ///< rule r, row o at output[r] + o * stride (+=)
};

/// Weights K_r(k) at weights[r][k], k < count (K_r(0) is never read); the direct sum reads
/// k up to offset + p - 1, so count >= offset + p.
struct HistoryWeights {
  const double* weights[2] = {nullptr, nullptr};
  std::int64_t count = 0;
};

/// Spectra of the weights for the FFT path.
struct HistorySpectra {
  std::int64_t fft_length = 0;  ///< L >= max(m + p - 1, 1)
  /// Per rule: L/2 + 1 complex numbers (re, im interleaved), history_spectrum(K_r, L).
  const double* spectrum[2] = {nullptr, nullptr};
};

/// The discrete Fourier transform of (K(1), ..., K(L)) over length L, divided by L, as
/// 2 (L/2 + 1) doubles (re, im interleaved). `weights` holds K(0..L) (L + 1 values; K(0) is
/// not read). Plans a transform per call (FFTW_ESTIMATE): call it once per square size.
std::vector<double> history_spectrum(const double* weights, std::int64_t fft_length);

struct HistoryOptions {
  int cuda_device = 0;  ///< runtime device index for history_fft_cuda
  /// Doubles of padded signal (components x L) the host path transforms per batch; larger
  /// batches are split into chunks of components. The host path keeps about 4x this much
  /// scratch. (The cuda path batches by its `chunks` argument instead.)
  std::int64_t max_batch_doubles = std::int64_t{1} << 15;
  /// cuFFT plans of history_fft_cuda come from this cache (e.g. the rank's
  /// exec::Selector::cuda_resources()); null: from the workspace's own cache, which lives
  /// as long as the workspace (see cuda_resources.hpp).
  CudaResources* cuda_resources = nullptr;
};

/// Cached FFTW plans and scratch arrays of the host FFT path and cuFFT plans of the cuda path
/// (grown on demand, kept for the next call). Not thread-safe: one thread per workspace; construct
/// and destroy workspaces from one thread at a time (FFTW's planner is not thread-safe).
class HistoryWorkspace {
 public:
  explicit HistoryWorkspace(HistoryOptions options = {});
  ~HistoryWorkspace();
  HistoryWorkspace(HistoryWorkspace&&) noexcept;
  HistoryWorkspace& operator=(HistoryWorkspace&&) noexcept;
  HistoryWorkspace(const HistoryWorkspace&) = delete;
  HistoryWorkspace& operator=(const HistoryWorkspace&) = delete;

  const HistoryOptions& options() const;
  /// Number of distinct FFTW plan pairs created so far (each (L, batch) once).
  std::int64_t plans_created() const;
  /// The cache of the cuda path's cuFFT plans: options().cuda_resources when set, else the
  /// workspace's own (empty until the cuda path runs; destroyed with the workspace).
  CudaResources& cuda_resources();

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// The signature of the FFT path on every backend.
using HistoryFftFn = void(const HistoryBlock& block, const HistorySpectra& spectra,
                          HistoryWorkspace& workspace);

/// Input checks shared by the entry points (fracmfg::Error naming the problem).
void check_history_block(const HistoryBlock& block, const char* caller);
void check_history_fft(const HistoryBlock& block, const HistorySpectra& spectra,
                       const char* caller);

/// Direct sum (see the header comment). Checks weights.count >= offset + p.
void history_direct_host(const HistoryBlock& block, const HistoryWeights& weights);

/// FFT path on the host (FFTW + Kokkos).
void history_fft_host(const HistoryBlock& block, const HistorySpectra& spectra,
                      HistoryWorkspace& workspace);

/// FFT path on a CUDA device (cuFFT), all components in one batch, or in `chunks` batches of
/// ceil(components / chunks) when the device holds only part of the working set (the
/// selector's Decision::chunks). Throws NotCompiled without CUDA, fracmfg::Error for
/// chunks < 1.
void history_fft_cuda(const HistoryBlock& block, const HistorySpectra& spectra,
                      HistoryWorkspace& workspace, int chunks = 1);

}  // namespace fracmfg::kernels
