// CUDA backend of kernels::mfg_hjb_rows and kernels::mfg_fp_rows: one thread per owned point
// running the host's bodies (kernels/mfg_rows_item.hpp). Per call the values, coefficients
// and right-hand sides go over and the residual and rows come back; the device arrays are
// kept between calls and grow when a call needs more. The sum of r^2 is formed on the host
// from the copied residual, in the host loop's order.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

#include "kernels/cuda/cuda_handles.hpp"
#include "kernels/cuda/mfg_rows_cuda.hpp"
#include "kernels/mfg_rows_item.hpp"

namespace fracmfg::kernels {

namespace {

/// A device array with the number of doubles it holds.
struct Buffer {
  cuda::DeviceArray<double> data;
  std::int64_t capacity = 0;

  double* reserve(std::int64_t count, const char* what) {
    if (count > capacity) {
      capacity = 0;
      data.reset();
      data = cuda::device_alloc<double>(static_cast<std::size_t>(count), what);
      capacity = count;
    }
    return data.get();
  }
};

}  // namespace

struct MfgRowsDevice::State {
  int device = 0;
  Buffer u, coef, u_next, rhs, residual, rows;

  ~State() {
    cuda::QuietDeviceGuard guard(device);
    for (Buffer* b : {&u, &coef, &u_next, &rhs, &residual, &rows}) b->data.reset();
  }
};

namespace cuda {

namespace {

constexpr unsigned threads_per_block = 256;

template <int Dim, bool Owned1d, bool Power, bool Residual, bool Rows>
__global__ void hjb_rows_kernel(HjbRowsCall c, std::int64_t count) {
  const std::int64_t xm = c.block.size[0];
  const std::int64_t ym = Dim >= 2 ? c.block.size[1] : 1;
  for (std::int64_t k = global_thread(); k < count; k += grid_threads()) {
    const std::int64_t i = k % xm, line = k / xm;
    detail::hjb_rows_item<Dim, Owned1d, Power, Residual, Rows>(c, i, line % ym, line / ym);
  }
}

__global__ void fp_rows_kernel(FpRowsCall c) {
  for (std::int64_t k = global_thread(); k < c.block.size[0]; k += grid_threads()) {
    detail::fp_rows_item(c, k);
  }
}

std::size_t sz(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

}  // namespace

MfgRowsDevice::State* mfg_rows_create(int device) {
  auto s = std::make_unique<MfgRowsDevice::State>();
  s->device = device;
  return s.release();
}

void mfg_rows_destroy(MfgRowsDevice::State* state) noexcept {
  delete state;
}

double mfg_hjb_rows(MfgRowsDevice::State* s, const HjbRowsCall& c) {
  DeviceGuard guard(s->device);
  const std::int64_t n = mfg_block_points(c.block);
  const std::int64_t values = mfg_block_values(c.block);
  const bool rows3 = c.diag != nullptr;
  const std::int64_t row_values =
      rows3 ? 3 * n : (c.rows != nullptr ? mfg_row_width(c.block.dim) * n : 0);
  HjbRowsCall d = c;
  d.u = s->u.reserve(values, "cudaMalloc (u)");
  d.coef = s->coef.reserve(n, "cudaMalloc (coefficients)");
  copy_to_device(s->u.data.get(), c.u, sz(values), "copy of u");
  copy_to_device(s->coef.data.get(), c.coef, sz(n), "copy of the coefficients");
  if (c.residual != nullptr) {
    d.u_next = s->u_next.reserve(n, "cudaMalloc (u_next)");
    d.rhs = s->rhs.reserve(n, "cudaMalloc (rhs)");
    d.residual = s->residual.reserve(n, "cudaMalloc (residual)");
    copy_to_device(s->u_next.data.get(), c.u_next, sz(n), "copy of u_next");
    copy_to_device(s->rhs.data.get(), c.rhs, sz(n), "copy of rhs");
  }
  if (row_values > 0) {
    double* rows = s->rows.reserve(row_values, "cudaMalloc (rows)");
    if (rows3) {
      d.sub = rows;
      d.diag = rows + n;
      d.super = rows + 2 * n;
    } else {
      d.rows = rows;
    }
  }
  const unsigned blocks = grid_blocks(n, threads_per_block);
  detail::hjb_kind(c, [&](auto kind) {
    using K = decltype(kind);
    hjb_rows_kernel<K::dim, K::owned_1d, K::power, K::residual, K::rows>
        <<<blocks, threads_per_block>>>(d, n);
  });
  cuda_sync_check("mfg_hjb_rows kernel");
  double sum = 0.0;
  if (c.residual != nullptr) {
    copy_to_host(c.residual, d.residual, sz(n), "copy of the residual");
    for (std::int64_t k = 0; k < n; ++k) sum += c.residual[k] * c.residual[k];
  }
  if (rows3) {
    copy_to_host(c.sub, d.sub, sz(n), "copy of the rows");
    copy_to_host(c.diag, d.diag, sz(n), "copy of the rows");
    copy_to_host(c.super, d.super, sz(n), "copy of the rows");
  } else if (c.rows != nullptr) {
    copy_to_host(c.rows, d.rows, sz(row_values), "copy of the rows");
  }
  return sum;
}

void mfg_fp_rows(MfgRowsDevice::State* s, const FpRowsCall& c) {
  DeviceGuard guard(s->device);
  const std::int64_t n = c.block.size[0];
  FpRowsCall d = c;
  d.u = s->u.reserve(n, "cudaMalloc (u)");
  d.inv_c = s->coef.reserve(n, "cudaMalloc (coefficients)");
  double* rows = s->rows.reserve(3 * n, "cudaMalloc (rows)");
  d.sub = rows;
  d.diag = rows + n;
  d.super = rows + 2 * n;
  copy_to_device(s->u.data.get(), c.u, sz(n), "copy of u");
  copy_to_device(s->coef.data.get(), c.inv_c, sz(n), "copy of the coefficients");
  fp_rows_kernel<<<grid_blocks(n, threads_per_block), threads_per_block>>>(d);
  cuda_sync_check("mfg_fp_rows kernel");
  copy_to_host(c.sub, d.sub, sz(n), "copy of the rows");
  copy_to_host(c.diag, d.diag, sz(n), "copy of the rows");
  copy_to_host(c.super, d.super, sz(n), "copy of the rows");
}

}  // namespace cuda
}  // namespace fracmfg::kernels
