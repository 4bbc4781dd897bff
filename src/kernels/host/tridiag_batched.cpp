// Host backend of kernels::tridiag_batched: a Kokkos loop over systems, each running the
// per-system body of kernels/tridiag_item.hpp.
#include "fracmfg/kernels/tridiag_batched.hpp"

#include <Kokkos_Core.hpp>

#include <limits>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "kernels/host/kernel_checks.hpp"
#include "kernels/tridiag_item.hpp"

namespace fracmfg::kernels {

namespace {
// Kokkos takes a loop's label as a const std::string&: made once, not per call.
const std::string kLabelTridiagBatchedHost{"fracmfg::tridiag_batched_host"};
}  // namespace

std::size_t tridiag_workspace_size(std::int64_t systems, std::int64_t size, bool cyclic) {
  if (systems <= 0 || size <= 0) return 0;
  return static_cast<std::size_t>(systems) * static_cast<std::size_t>(size) * (cyclic ? 2 : 1);
}

TridiagCudaMethod tridiag_cuda_method_for(const TridiagBatch& batch,
                                          const TridiagOptions& options) {
  if (batch.size < 3) return TridiagCudaMethod::thomas;  // gtsv2StridedBatch needs n >= 3
  switch (options.cuda_method) {
    case TridiagCudaMethod::thomas:
    case TridiagCudaMethod::cusparse: return options.cuda_method;
    case TridiagCudaMethod::automatic: break;
  }
  return !options.cyclic && batch.size >= kTridiagCusparseMinSize ? TridiagCudaMethod::cusparse
                                                                  : TridiagCudaMethod::thomas;
}

void check_tridiag_batch(const TridiagBatch& batch, const char* caller) {
  const detail::Who who{caller};
  if (batch.systems < 0) {
    throw Error(who + ": negative number of systems (" + std::to_string(batch.systems) + ")");
  }
  if (batch.size < 0) {
    throw Error(who + ": negative system size (" + std::to_string(batch.size) + ")");
  }
  if (batch.systems == 0 || batch.size == 0) return;
  // 2*m*n must fit the index type of the workspace.
  if (batch.systems > std::numeric_limits<std::int64_t>::max() / 2 / batch.size) {
    throw Error(who + ": batch of " + std::to_string(batch.systems) + " systems of size " +
                std::to_string(batch.size) + " is too large");
  }
  if (batch.layout != TridiagLayout::strided && batch.layout != TridiagLayout::interleaved) {
    throw Error(who + ": unknown layout");
  }
  const char* missing = batch.sub == nullptr     ? "sub"
                        : batch.diag == nullptr  ? "diag"
                        : batch.super == nullptr ? "super"
                        : batch.rhs == nullptr   ? "rhs"
                                                 : nullptr;
  if (missing != nullptr) throw Error(who + ": null pointer for the " + missing + " array");
}

void tridiag_batched_host(const TridiagBatch& batch, const TridiagOptions& options) {
  constexpr const char* who = "tridiag_batched_host";
  check_tridiag_batch(batch, who);
  if (batch.systems == 0 || batch.size == 0) return;
  detail::require_kokkos(who);

  std::vector<double> owned;
  double* work = batch.workspace;
  if (work == nullptr) {
    owned.resize(tridiag_workspace_size(batch.systems, batch.size, options.cyclic));
    work = owned.data();
  }
  const bool interleaved = batch.layout == TridiagLayout::interleaved;
  const bool cyclic = options.cyclic;
  const std::int64_t m = batch.systems;
  const std::int64_t n = batch.size;
  const double* sub = batch.sub;
  const double* diag = batch.diag;
  const double* super = batch.super;
  double* rhs = batch.rhs;

  // Work items are packs of `lanes` consecutive systems (the last pack may be shorter and
  // is solved system by system). The reduction keeps the smallest key k*(n+1) + row over
  // failing systems: the first failing system and its first failing row. m*(n+1) <= 2*m*n
  // fits std::int64_t (check_tridiag_batch).
  constexpr int lanes = 4;
  const std::int64_t packs = (m + lanes - 1) / lanes;
  const std::int64_t none = std::numeric_limits<std::int64_t>::max();
  std::int64_t first_failure = none;
  using Policy =
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_reduce(
      kLabelTridiagBatchedHost, Policy(0, packs),
      [=](const std::int64_t p, std::int64_t& key) {
        const std::int64_t k0 = p * lanes;
        std::int64_t status[lanes] = {0, 0, 0, 0};
        if (k0 + lanes <= m) {
          detail::tridiag_solve_pack_item<lanes>(interleaved, cyclic, m, n, k0, sub, diag, super,
                                                 rhs, work, status);
        } else {
          for (std::int64_t k = k0; k < m; ++k) {
            status[k - k0] = detail::tridiag_solve_item(interleaved, cyclic, m, n, k, sub, diag,
                                                        super, rhs, work);
          }
        }
        for (int l = 0; l < lanes; ++l) {
          if (status[l] == 0) continue;
          const std::int64_t candidate = (k0 + l) * (n + 1) + (status[l] - 1);
          if (candidate < key) key = candidate;
        }
      },
      Kokkos::Min<std::int64_t>(first_failure));
  if (first_failure != none) {
    detail::throw_zero_pivot(who, first_failure / (n + 1), first_failure % (n + 1));
  }
}

}  // namespace fracmfg::kernels
