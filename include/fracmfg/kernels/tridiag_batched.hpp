#pragma once
// kernels::tridiag_batched: many independent tridiagonal systems solved at once, node-local.
//
// System k (0 <= k < systems) of size n reads, for rows i = 0..n-1,
//
//     sub[i] x[i-1] + diag[i] x[i] + super[i] x[i+1] = rhs[i]
//
// In a plain (non-cyclic) solve sub[0] and super[n-1] are ignored. In a cyclic solve the
// indices wrap around (periodic boundaries): sub[0] multiplies x[n-1] and super[n-1]
// multiplies x[0]; for n = 2 both sub[0] and super[0] multiply x[1] (and both sub[1] and
// super[1] multiply x[0]); for n = 1 the single equation is (sub + diag + super) x = rhs.
//
// Layouts (all four arrays and the workspace use the same one):
//   strided      entry i of system k at [k*n + i]   (one system after the other)
//   interleaved  entry i of system k at [i*m + k]   (m = systems; row i of all systems
//                                                    contiguous: coalesced on a GPU)
//
// Algorithms: Thomas' algorithm (Gaussian elimination without pivoting: stable for
// diagonally dominant or symmetric positive definite matrices), about 9n flops per system; the
// cyclic variant uses the Sherman-Morrison formula (Numerical Recipes, 3rd ed., sec. 2.7.2)
// on top of it and costs about twice as much. A pivot that is exactly zero (or NaN) raises
// NumericalError naming the first failing system; the rhs contents are then unspecified.
//
// Entry points: one signature, TridiagBatchedFn, implemented by each backend.
//   tridiag_batched_host  Kokkos loop on the default host execution space (needs Kokkos
//                         initialised, e.g. by core::Environment) over packs of four
//                         consecutive systems whose eliminations are interleaved row by row
//                         (instruction-level parallelism: faster than one system at a
//                         time); per system the arithmetic is exactly the CUDA thread's.
//                         The strided layout is the faster one on the host.
//   tridiag_batched_cuda  copies to device `options.cuda_device`, solves, copies back.
//                         Throws NotCompiled in a build without CUDA and fracmfg::Error
//                         (message starting "CUDA", with the runtime's error text) when the
//                         device cannot run it, so a caller may fall back to the host.
// Neither call is collective; both are synchronous.

#include <cstddef>
#include <cstdint>

namespace fracmfg::kernels {

class CudaResources;  // fracmfg/kernels/cuda_resources.hpp

/// Where entry i of system k lives; see the header comment.
enum class TridiagLayout : std::uint8_t { strided = 0, interleaved = 1 };

/// The CUDA path's algorithm.
///   thomas    one thread per system running the host's Thomas body; its native layout is
///             interleaved (a strided batch is transposed on the device, and back).
///   cusparse  cusparseDgtsv2StridedBatch (cyclic reduction; native layout strided, an
///             interleaved batch is transposed on the device); a cyclic batch is solved with
///             two such calls and the Sherman-Morrison correction. Systems with n < 3 use
///             the thomas path. Zero pivots are not detected by cuSPARSE: a non-finite
///             solution raises NumericalError instead.
///   automatic (the default) cusparse for non-cyclic systems of at least
///             kTridiagCusparseMinSize (512, between the sizes timed as a tie and as a
///             win) unknowns, thomas otherwise (tridiag_cuda_method_for): on an H200 the
///             two tie on short systems and cuSPARSE wins on long ones, most on few systems,
///             where one thread per system leaves the device idle (docs/performance.md, "GPU
///             check (`scripts/gpu-check`)"). Cyclic batches were not timed and keep thomas
///             (one solve instead of cuSPARSE's two).
enum class TridiagCudaMethod : std::uint8_t { thomas = 0, cusparse = 1, automatic = 2 };

/// Unknowns per system from which TridiagCudaMethod::automatic takes cuSPARSE.
inline constexpr std::int64_t kTridiagCusparseMinSize = 512;

/// A batch of systems over caller-owned memory (host memory for both entry points).
struct TridiagBatch {
  TridiagLayout layout = TridiagLayout::strided;
  std::int64_t systems = 0;       ///< m >= 0
  std::int64_t size = 0;          ///< n >= 0 (rows per system)
  const double* sub = nullptr;    ///< m*n entries
  const double* diag = nullptr;   ///< m*n entries
  const double* super = nullptr;  ///< m*n entries
  double* rhs = nullptr;          ///< m*n entries: right-hand sides in, solutions out
  /// Optional host scratch of tridiag_workspace_size(systems, size, cyclic) doubles in the
  /// same layout; when null the host path allocates it once per call (never per system).
  double* workspace = nullptr;
};

struct TridiagOptions {
  bool cyclic = false;  ///< periodic coupling (see the header comment)
  TridiagCudaMethod cuda_method = TridiagCudaMethod::automatic;
  int cuda_device = 0;  ///< runtime device index for the cuda entry point
  /// The cusparse method takes its cuSPARSE handle from (and keeps it in) this cache; null:
  /// each call creates and destroys its own (see cuda_resources.hpp).
  CudaResources* cuda_resources = nullptr;
};

/// The signature every backend implements.
using TridiagBatchedFn = void(const TridiagBatch& batch, const TridiagOptions& options);

/// Doubles of workspace the host path needs: m*n, or 2*m*n when cyclic.
std::size_t tridiag_workspace_size(std::int64_t systems, std::int64_t size, bool cyclic);

/// The method the CUDA path runs for this batch: `options.cuda_method` resolved
/// (automatic: see TridiagCudaMethod), and thomas wherever cuSPARSE cannot take the systems
/// (n < 3). Host code: no device needed.
TridiagCudaMethod tridiag_cuda_method_for(const TridiagBatch& batch, const TridiagOptions& options);

/// Checks sizes and pointers (fracmfg::Error naming the problem); both entry points call it.
void check_tridiag_batch(const TridiagBatch& batch, const char* caller);

/// Host backend (Kokkos). Throws NumericalError on a zero pivot ("... system k, row i").
void tridiag_batched_host(const TridiagBatch& batch, const TridiagOptions& options);

/// CUDA backend. Throws NotCompiled without CUDA, fracmfg::Error on a CUDA failure and
/// NumericalError on a zero pivot (thomas) or non-finite solution (cusparse).
void tridiag_batched_cuda(const TridiagBatch& batch, const TridiagOptions& options);

}  // namespace fracmfg::kernels
