// Public CUDA entry points of the node-local kernels: the input checks, then the CUDA
// translation units when this build has them, else NotCompiled. This is the dispatch point
// of kernels/cuda (the only FRACMFG_HAVE_CUDA test on this side).
#include <string>

#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/kernels/circulant.hpp"
#include "fracmfg/kernels/cuda_resources.hpp"
#include "fracmfg/kernels/kde.hpp"
#include "fracmfg/kernels/tridiag_batched.hpp"

#if FRACMFG_HAVE_CUDA
#include "kernels/cuda/circulant_cuda.hpp"
#include "kernels/cuda/kde_cuda.hpp"
#include "kernels/cuda/tridiag_batched_cuda.hpp"
#include "kernels/host/kde_plan.hpp"
#endif

namespace fracmfg::kernels {

#if !FRACMFG_HAVE_CUDA
namespace {
[[noreturn]] void not_compiled(const char* kernel) {
  throw NotCompiled(std::string("the CUDA backend (") + kernel + ")", {"cpu"});
}
}  // namespace
#endif

void tridiag_batched_cuda(const TridiagBatch& batch, const TridiagOptions& options) {
  constexpr const char* who = "tridiag_batched_cuda";
  check_tridiag_batch(batch, who);
#if FRACMFG_HAVE_CUDA
  if (batch.systems == 0 || batch.size == 0) return;
  cuda::tridiag_batched(batch, options);
#else
  (void)options;
  not_compiled(who);
#endif
}

void kde_binned_cuda(const KdeGrid& grid, const KdeSamples& samples, double* density,
                     const KdeOptions& options) {
  constexpr const char* who = "kde_binned_cuda";
  check_kde(grid, samples, density, options, who);
#if FRACMFG_HAVE_CUDA
  cuda::kde_binned(detail::make_kde_plan(grid, options, true), samples, density,
                   options.sample_chunks, options.cuda_device,
                   options.cuda_resources != nullptr ? &options.cuda_resources->cache() : nullptr);
#else
  not_compiled(who);
#endif
}

void kde_exact_cuda(const KdeGrid& grid, const KdeSamples& samples, double* density,
                    const KdeOptions& options) {
  constexpr const char* who = "kde_exact_cuda";
  check_kde(grid, samples, density, options, who);
#if FRACMFG_HAVE_CUDA
  cuda::kde_exact(detail::make_kde_plan(grid, options, false), samples, density,
                  options.cuda_device);
#else
  not_compiled(who);
#endif
}

void circulant_batched_cuda(const CirculantBatch& batch, CirculantWorkspace& workspace) {
  constexpr const char* who = "circulant_batched_cuda";
  check_circulant_batch(batch, who);
#if FRACMFG_HAVE_CUDA
  if (batch.lines == 0 || batch.length == 0) return;
  cuda::circulant_batched(batch, workspace.options().cuda_device,
                          &workspace.cuda_resources().cache());
#else
  (void)workspace;
  not_compiled(who);
#endif
}

void circulant_2d_cuda(const Circulant2d& product, CirculantWorkspace& workspace) {
  constexpr const char* who = "circulant_2d_cuda";
  check_circulant_2d(product, who);
#if FRACMFG_HAVE_CUDA
  if (product.nx == 0 || product.ny == 0) return;
  cuda::circulant_2d(product, workspace.options().cuda_device, &workspace.cuda_resources().cache());
#else
  (void)workspace;
  not_compiled(who);
#endif
}

}  // namespace fracmfg::kernels
