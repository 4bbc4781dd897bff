// CUDA backend of kernels::tridiag_batched. No Kokkos headers here (Debian's Kokkos is a
// host-only g++ build); the arithmetic is the host's, from kernels/tridiag_item.hpp.
//
// thomas:   one thread per system on the interleaved layout (thread k reads entry i of
//           system k next to thread k+1's: coalesced); a strided batch is transposed on the
//           device before and after.
// cusparse: cusparseDgtsv2StridedBatch on the strided layout (an interleaved batch is
//           transposed on the device); cyclic batches by Sherman-Morrison around two calls.
#include <climits>
#include <cuda_runtime.h>

#include <cstdint>
#include <cusparse.h>
#include <string>

#include "fracmfg/kernels/cuda_resources.hpp"
#include "kernels/cuda/cuda_handles.hpp"
#include "kernels/cuda/resource_cache_cuda.hpp"
#include "kernels/cuda/tridiag_batched_cuda.hpp"
#include "kernels/host/kernel_checks.hpp"
#include "kernels/tridiag_item.hpp"

namespace fracmfg::kernels::cuda {

namespace {

constexpr const char* who = "tridiag_batched_cuda";
constexpr unsigned threads_per_block = 128;
constexpr int tile = 32;
constexpr unsigned long long no_failure = ~0ULL;

// out (cols x rows) = transpose of in (rows x cols), both row-major; tiled through shared
// memory so that reads and writes are both coalesced.
__global__ void transpose_kernel(const double* in, double* out, std::int64_t rows,
                                 std::int64_t cols) {
  __shared__ double t[tile][tile + 1];
  for (std::int64_t by = blockIdx.y; by * tile < rows; by += gridDim.y) {
    for (std::int64_t bx = blockIdx.x; bx * tile < cols; bx += gridDim.x) {
      const std::int64_t r0 = by * tile;
      const std::int64_t c0 = bx * tile;
      for (int j = threadIdx.y; j < tile; j += blockDim.y) {
        const std::int64_t r = r0 + j;
        const std::int64_t c = c0 + threadIdx.x;
        if (r < rows && c < cols) t[j][threadIdx.x] = in[r * cols + c];
      }
      __syncthreads();
      for (int j = threadIdx.y; j < tile; j += blockDim.y) {
        const std::int64_t c = c0 + j;
        const std::int64_t r = r0 + threadIdx.x;
        if (r < rows && c < cols) out[c * rows + r] = t[threadIdx.x][j];
      }
      __syncthreads();
    }
  }
}

void transpose(const double* in, double* out, std::int64_t rows, std::int64_t cols) {
  const auto tiles = [](std::int64_t e, std::int64_t cap) {
    const std::int64_t t = (e + tile - 1) / tile;
    return static_cast<unsigned>(t > cap ? cap : t);
  };
  const dim3 grid(tiles(cols, 65535), tiles(rows, 65535));
  const dim3 block(tile, 8);
  transpose_kernel<<<grid, block>>>(in, out, rows, cols);
  cuda_check(cudaGetLastError(), "transpose launch");
}

__global__ void thomas_kernel(bool cyclic, std::int64_t m, std::int64_t n, const double* sub,
                              const double* diag, const double* super, double* rhs, double* work,
                              unsigned long long* first_failure) {
  for (std::int64_t k = global_thread(); k < m; k += grid_threads()) {
    const std::int64_t status =
        detail::tridiag_solve_item(true, cyclic, m, n, k, sub, diag, super, rhs, work);
    if (status != 0) {
      atomicMin(first_failure, static_cast<unsigned long long>(k * (n + 1) + (status - 1)));
    }
  }
}

// Strided layout, n >= 3: saves the corners (beta = sub[0], alpha = super[n-1]) and zeroes
// them as gtsv2 requires; for a cyclic batch also forms A' (diagonal corrections) and u.
__global__ void prepare_cusparse_kernel(bool cyclic, std::int64_t m, std::int64_t n, double* sub,
                                        double* diag, double* super, double* corners, double* u) {
  for (std::int64_t k = global_thread(); k < m; k += grid_threads()) {
    const std::int64_t o = k * n;
    const double beta = sub[o];
    const double alpha = super[o + n - 1];
    sub[o] = 0.0;
    super[o + n - 1] = 0.0;
    if (!cyclic) continue;
    const double gamma = detail::sherman_morrison_gamma(diag[o]);
    corners[2 * k] = beta;
    corners[2 * k + 1] = gamma;
    diag[o] -= gamma;
    diag[o + n - 1] -= alpha * beta / gamma;
    for (std::int64_t i = 0; i < n; ++i) u[o + i] = 0.0;
    u[o] = gamma;
    u[o + n - 1] = alpha;
  }
}

__global__ void sherman_morrison_kernel(std::int64_t m, std::int64_t n, const double* corners,
                                        double* rhs, const double* z,
                                        unsigned long long* first_failure) {
  for (std::int64_t k = global_thread(); k < m; k += grid_threads()) {
    const std::int64_t o = k * n;
    if (detail::sherman_morrison_correct(n, 1, corners[2 * k], corners[2 * k + 1], rhs + o,
                                         z + o) != 0) {
      atomicMin(first_failure, static_cast<unsigned long long>(k));
    }
  }
}

__global__ void finite_check_kernel(std::int64_t m, std::int64_t n, const double* x,
                                    unsigned long long* first_failure) {
  for (std::int64_t k = global_thread(); k < m; k += grid_threads()) {
    for (std::int64_t i = 0; i < n; ++i) {
      if (!isfinite(x[k * n + i])) {
        atomicMin(first_failure, static_cast<unsigned long long>(k));
        break;
      }
    }
  }
}

unsigned long long read_flag(const DeviceArray<unsigned long long>& flag) {
  unsigned long long host = no_failure;
  copy_to_host(&host, flag.get(), 1, "copy of the failure flag");
  return host;
}

DeviceArray<unsigned long long> make_flag() {
  auto flag = device_alloc<unsigned long long>(1, "cudaMalloc (failure flag)");
  const unsigned long long init = no_failure;
  copy_to_device(flag.get(), &init, 1, "copy of the failure flag");
  return flag;
}

// Copies a host array in `layout` to the device in `native` layout (transposing through tmp).
void upload(const double* host, double* dev, double* tmp, std::int64_t m, std::int64_t n,
            TridiagLayout layout, TridiagLayout native) {
  const std::size_t count = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  if (layout == native) {
    copy_to_device(dev, host, count, "host-to-device copy");
    return;
  }
  copy_to_device(tmp, host, count, "host-to-device copy");
  if (layout == TridiagLayout::strided) {
    transpose(tmp, dev, m, n);  // (m x n) -> (n x m)
  } else {
    transpose(tmp, dev, n, m);
  }
}

void download(const double* dev, double* host, double* tmp, std::int64_t m, std::int64_t n,
              TridiagLayout layout, TridiagLayout native) {
  const std::size_t count = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  if (layout == native) {
    copy_to_host(host, dev, count, "device-to-host copy");
    return;
  }
  if (native == TridiagLayout::interleaved) {
    transpose(dev, tmp, n, m);  // (n x m) -> (m x n)
  } else {
    transpose(dev, tmp, m, n);
  }
  cuda_sync_check("transpose");
  copy_to_host(host, tmp, count, "device-to-host copy");
}

// The four arrays of a batch, copied to the device in the solver's `native` layout, with
// the scratch array a layout change transposes through (empty when none is needed).
struct DeviceBatch {
  DeviceBatch(const TridiagBatch& batch, TridiagLayout native_layout)
      : m(batch.systems), n(batch.size), layout(batch.layout), native(native_layout) {
    const std::size_t count = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
    sub = device_alloc<double>(count, "cudaMalloc (sub)");
    diag = device_alloc<double>(count, "cudaMalloc (diag)");
    super = device_alloc<double>(count, "cudaMalloc (super)");
    rhs = device_alloc<double>(count, "cudaMalloc (rhs)");
    if (layout != native) tmp = device_alloc<double>(count, "cudaMalloc (transpose)");
    upload(batch.sub, sub.get(), tmp.get(), m, n, layout, native);
    upload(batch.diag, diag.get(), tmp.get(), m, n, layout, native);
    upload(batch.super, super.get(), tmp.get(), m, n, layout, native);
    upload(batch.rhs, rhs.get(), tmp.get(), m, n, layout, native);
  }
  /// Copies the solution (in rhs) back to the host array `out` in the batch's layout.
  void download_solution(double* out) { download(rhs.get(), out, tmp.get(), m, n, layout, native); }

  std::int64_t m;
  std::int64_t n;
  TridiagLayout layout;
  TridiagLayout native;
  DeviceArray<double> sub, diag, super, rhs, tmp;
};

void solve_thomas(const TridiagBatch& batch, bool cyclic) {
  const std::int64_t m = batch.systems;
  const std::int64_t n = batch.size;
  const std::size_t count = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  DeviceBatch d(batch, TridiagLayout::interleaved);
  auto work = device_alloc<double>(count * (cyclic ? 2 : 1), "cudaMalloc (workspace)");
  auto flag = make_flag();

  thomas_kernel<<<grid_blocks(m, threads_per_block), threads_per_block>>>(
      cyclic, m, n, d.sub.get(), d.diag.get(), d.super.get(), d.rhs.get(), work.get(), flag.get());
  cuda_sync_check("thomas kernel");
  const unsigned long long failure = read_flag(flag);
  if (failure != no_failure) {
    const auto key = static_cast<std::int64_t>(failure);
    detail::throw_zero_pivot(who, key / (n + 1), key % (n + 1));
  }
  d.download_solution(batch.rhs);
}

void solve_cusparse(const TridiagBatch& batch, const TridiagOptions& options) {
  const bool cyclic = options.cyclic;
  const std::int64_t m = batch.systems;
  const std::int64_t n = batch.size;
  if (m > INT_MAX || n > INT_MAX) {
    throw Error("CUDA cuSPARSE path: batch sizes exceed the int range of gtsv2StridedBatch");
  }
  const std::size_t count = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  const SparseHandleRef handle(
      options.cuda_resources != nullptr ? &options.cuda_resources->cache() : nullptr,
      options.cuda_device);
  DeviceBatch d(batch, TridiagLayout::strided);
  double* sub = d.sub.get();
  double* diag = d.diag.get();
  double* super = d.super.get();
  double* rhs = d.rhs.get();
  DeviceArray<double> u;
  DeviceArray<double> corners;
  if (cyclic) {
    u = device_alloc<double>(count, "cudaMalloc (Sherman-Morrison u)");
    corners = device_alloc<double>(2 * static_cast<std::size_t>(m), "cudaMalloc (corners)");
  }
  auto flag = make_flag();

  const unsigned blocks = grid_blocks(m, threads_per_block);
  prepare_cusparse_kernel<<<blocks, threads_per_block>>>(cyclic, m, n, sub, diag, super,
                                                         corners.get(), u.get());
  cuda_sync_check("cuSPARSE preparation kernel");

  const int mi = static_cast<int>(n);
  const int batch_count = static_cast<int>(m);
  std::size_t bytes = 0;
  cusparse_check(cusparseDgtsv2StridedBatch_bufferSizeExt(handle.get(), mi, sub, diag, super, rhs,
                                                          batch_count, mi, &bytes),
                 "cusparseDgtsv2StridedBatch_bufferSizeExt");
  auto buffer = device_alloc<char>(bytes, "cudaMalloc (cuSPARSE buffer)");
  cusparse_check(cusparseDgtsv2StridedBatch(handle.get(), mi, sub, diag, super, rhs, batch_count,
                                            mi, buffer.get()),
                 "cusparseDgtsv2StridedBatch");
  if (cyclic) {
    cusparse_check(cusparseDgtsv2StridedBatch(handle.get(), mi, sub, diag, super, u.get(),
                                              batch_count, mi, buffer.get()),
                   "cusparseDgtsv2StridedBatch");
    sherman_morrison_kernel<<<blocks, threads_per_block>>>(m, n, corners.get(), rhs, u.get(),
                                                           flag.get());
  }
  finite_check_kernel<<<blocks, threads_per_block>>>(m, n, rhs, flag.get());
  cuda_sync_check("cuSPARSE solve");
  const unsigned long long failure = read_flag(flag);
  if (failure != no_failure) detail::throw_non_finite(who, static_cast<std::int64_t>(failure));
  d.download_solution(batch.rhs);
}

}  // namespace

void tridiag_batched(const TridiagBatch& batch, const TridiagOptions& options) {
  DeviceGuard device(options.cuda_device);
  if (tridiag_cuda_method_for(batch, options) == TridiagCudaMethod::cusparse) {
    solve_cusparse(batch, options);
  } else {
    solve_thomas(batch, options.cyclic);
  }
}

}  // namespace fracmfg::kernels::cuda
