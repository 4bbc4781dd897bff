// Host backend of kernels::mfg_hjb_rows and kernels::mfg_fp_rows: a Kokkos loop over the
// lines of the owned box (x fastest), each point running the bodies of
// kernels/mfg_rows_item.hpp; the sum of r^2 is reduced in the order of the points.
#include "fracmfg/kernels/mfg_rows.hpp"

#include <Kokkos_Core.hpp>

#include <string>

#include "fracmfg/core/error.hpp"
#include "kernels/host/kernel_checks.hpp"
#include "kernels/mfg_rows_item.hpp"

namespace fracmfg::kernels {

namespace {

using HostPolicy =
    Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::int64_t>>;
// Kokkos takes a loop's label as a const std::string&: made once, not per call.
const std::string kLabelMfgFpRowsHost{"fracmfg::mfg_fp_rows_host"};
const std::string kLabelMfgHjbRowsHost{"fracmfg::mfg_hjb_rows_host"};

void check_block(const MfgBlock& b, detail::Who who) {
  if (b.dim < 1 || b.dim > 3) throw Error(who + ": a 1D, 2D or 3D block expected");
  for (int a = 0; a < b.dim; ++a) {
    if (b.size[a] < 0 || b.points[a] < 1 || b.start[a] < 0 ||
        b.start[a] + b.size[a] > b.points[a]) {
      throw Error(who + ": the owned box does not lie in the grid (axis " + std::to_string(a) +
                  ")");
    }
  }
  if (b.owned_1d && b.dim != 1) throw Error(who + ": owned values with ghosts are 1D only");
  if (!b.owned_1d) {
    for (int a = 0; a < b.dim; ++a) {
      if (b.ghost_start[a] > b.start[a] ||
          b.ghost_start[a] + b.ghost_size[a] < b.start[a] + b.size[a]) {
        throw Error(who + ": the ghosted box does not hold the owned box");
      }
    }
  }
}

}  // namespace

std::int64_t mfg_block_values(const MfgBlock& b) {
  if (b.owned_1d) return b.size[0];
  return b.ghost_size[0] * (b.dim >= 2 ? b.ghost_size[1] : 1) * (b.dim == 3 ? b.ghost_size[2] : 1);
}

void check_hjb_rows(const HjbRowsCall& c, const char* caller) {
  const detail::Who who{caller};
  check_block(c.block, who);
  const bool rows3 = c.sub != nullptr || c.diag != nullptr || c.super != nullptr;
  if (rows3 && (c.sub == nullptr || c.diag == nullptr || c.super == nullptr)) {
    throw Error(who + ": sub, diag and super come together");
  }
  if (rows3 && !c.block.owned_1d) throw Error(who + ": three row arrays need owned 1D values");
  if (c.rows != nullptr && c.block.owned_1d) {
    throw Error(who + ": interleaved rows need the ghosted box");
  }
  if (c.residual == nullptr && c.rows == nullptr && !rows3) {
    throw Error(who + ": neither a residual nor rows asked");
  }
  if (mfg_block_points(c.block) == 0) return;
  if (c.u == nullptr || c.coef == nullptr) throw Error(who + ": null u or coefficients");
  if (c.residual != nullptr && (c.u_next == nullptr || c.rhs == nullptr)) {
    throw Error(who + ": a residual needs u_next and rhs");
  }
}

void check_fp_rows(const FpRowsCall& c, const char* caller) {
  const detail::Who who{caller};
  check_block(c.block, who);
  if (c.block.dim != 1 || !c.block.owned_1d) {
    throw Error(who + ": the Fokker-Planck rows are 1D, on owned values with ghosts");
  }
  if (c.block.size[0] == 0) return;
  if (c.u == nullptr || c.inv_c == nullptr || c.sub == nullptr || c.diag == nullptr ||
      c.super == nullptr) {
    throw Error(who + ": null input or output array");
  }
}

double mfg_hjb_rows_host(const HjbRowsCall& c) {
  constexpr const char* who = "mfg_hjb_rows_host";
  check_hjb_rows(c, who);
  if (mfg_block_points(c.block) == 0) return 0.0;
  detail::require_kokkos(who);
  const std::int64_t xm = c.block.size[0];
  const std::int64_t ym = c.block.dim >= 2 ? c.block.size[1] : 1;
  const std::int64_t lines = ym * (c.block.dim == 3 ? c.block.size[2] : 1);
  double sum = 0.0;
  detail::hjb_kind(c, [&](auto kind) {
    using K = decltype(kind);
    Kokkos::parallel_reduce(
        kLabelMfgHjbRowsHost, HostPolicy(0, lines),
        [=](const std::int64_t line, double& acc) {
          // Local copies: the stores into the outputs cannot alias them, so the parameters
          // stay in registers and the line's sum accumulates in one (in the points' order).
          const HjbRowsCall call = c;
          const std::int64_t j = line % ym, l = line / ym;
          double part = 0.0;
          if (K::owned_1d && xm > 2) {
            // The first and the last point apart: the interior loop has no ghost or wall.
            part +=
                detail::hjb_rows_item<K::dim, true, K::power, K::residual, K::rows>(call, 0, 0, 0);
            for (std::int64_t i = 1; i + 1 < xm; ++i) {
              part += detail::hjb_rows_item<K::dim, true, K::power, K::residual, K::rows, true>(
                  call, i, 0, 0);
            }
            part += detail::hjb_rows_item<K::dim, true, K::power, K::residual, K::rows>(
                call, xm - 1, 0, 0);
          } else {
            for (std::int64_t i = 0; i < xm; ++i) {
              part += detail::hjb_rows_item<K::dim, K::owned_1d, K::power, K::residual, K::rows>(
                  call, i, j, l);
            }
          }
          acc += part;
        },
        sum);
  });
  return sum;
}

void mfg_fp_rows_host(const FpRowsCall& c) {
  constexpr const char* who = "mfg_fp_rows_host";
  check_fp_rows(c, who);
  if (c.block.size[0] == 0) return;
  detail::require_kokkos(who);
  // One work item: the first and the last point apart, the interior loop without ghosts.
  const std::int64_t n = c.block.size[0];
  Kokkos::parallel_for(kLabelMfgFpRowsHost, HostPolicy(0, 1), [=](const std::int64_t) {
    const FpRowsCall call = c;
    if (n <= 2) {
      for (std::int64_t k = 0; k < n; ++k) detail::fp_rows_item(call, k);
      return;
    }
    detail::fp_rows_item(call, 0);
    for (std::int64_t k = 1; k + 1 < n; ++k) detail::fp_rows_item<true>(call, k);
    detail::fp_rows_item(call, n - 1);
  });
}

}  // namespace fracmfg::kernels
