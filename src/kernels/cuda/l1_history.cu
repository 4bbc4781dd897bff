// CUDA backend of kernels::l1_history: the state (soe modes or past increments) resident on
// the device; one thread per point runs the host's bodies (kernels/l1_history_item.hpp), so
// neighbouring threads read neighbouring values of every mode (coalesced).
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <utility>

#include "kernels/cuda/cuda_handles.hpp"
#include "kernels/cuda/l1_history_cuda.hpp"
#include "kernels/l1_history_item.hpp"

namespace fracmfg::kernels {

struct L1HistoryDevice::State {
  int device = 0;
  std::int64_t points = 0;
  std::int64_t capacity = 0;
  bool double_buffer = false;
  cuda::DeviceArray<double> current;  ///< capacity x points
  cuda::DeviceArray<double> next;     ///< capacity x points (soe only)
  cuda::DeviceArray<double> increment;
  cuda::DeviceArray<double> history;
  cuda::DeviceArray<double> coefficients;

  ~State() {
    // cudaFree needs the owning device current; errors are ignored in a destructor.
    cuda::QuietDeviceGuard guard(device);
    current.reset();
    next.reset();
    increment.reset();
    history.reset();
    coefficients.reset();
  }
};

namespace cuda {

namespace {

constexpr unsigned threads_per_block = 256;

__global__ void soe_kernel(std::int64_t points, std::int64_t terms, const double* coefficients,
                           const double* du, const double* modes_in, double* modes_out,
                           double* history) {
  const double* decay = coefficients;
  const double* inject = coefficients + terms;
  const double* weight = coefficients + 2 * terms;
  for (std::int64_t i = global_thread(); i < points; i += grid_threads()) {
    detail::soe_history_range(i, i + 1, points, terms, decay, inject, weight, du, modes_in,
                              modes_out, history);
  }
}

__global__ void direct_kernel(std::int64_t points, std::int64_t levels, const double* weights,
                              const double* past, double* history) {
  for (std::int64_t i = global_thread(); i < points; i += grid_threads()) {
    detail::l1_direct_range(i, i + 1, points, levels, weights, past, history);
  }
}

std::size_t sz(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

}  // namespace

L1HistoryDevice::State* l1_create(int device, std::int64_t points, std::int64_t capacity,
                                  bool double_buffer, std::int64_t coefficients) {
  DeviceGuard guard(device);
  auto s = std::make_unique<L1HistoryDevice::State>();
  s->device = device;
  s->points = points;
  s->capacity = capacity;
  s->double_buffer = double_buffer;
  s->current = device_alloc<double>(sz(capacity * points), "cudaMalloc (history state)");
  if (double_buffer) {
    s->next = device_alloc<double>(sz(capacity * points), "cudaMalloc (history state)");
  }
  s->increment = device_alloc<double>(sz(points), "cudaMalloc (increment)");
  s->history = device_alloc<double>(sz(points), "cudaMalloc (history)");
  s->coefficients = device_alloc<double>(sz(coefficients), "cudaMalloc (coefficients)");
  return s.release();
}

void l1_destroy(L1HistoryDevice::State* state) noexcept {
  delete state;
}

void l1_upload(L1HistoryDevice::State* s, const double* host, std::int64_t vectors) {
  DeviceGuard guard(s->device);
  copy_to_device(s->current.get(), host, sz(vectors * s->points), "copy of the history state");
}

void l1_download(const L1HistoryDevice::State* s, double* host, std::int64_t vectors) {
  DeviceGuard guard(s->device);
  copy_to_host(host, s->current.get(), sz(vectors * s->points), "copy of the history state");
}

void l1_soe_step(L1HistoryDevice::State* s, const SoeHistoryStep& step) {
  DeviceGuard guard(s->device);
  const std::int64_t terms = step.terms;
  copy_to_device(s->increment.get(), step.increment, sz(s->points), "copy of the increment");
  copy_to_device(s->coefficients.get(), step.decay, sz(terms), "copy of the coefficients");
  copy_to_device(s->coefficients.get() + terms, step.inject, sz(terms), "copy of the coefficients");
  copy_to_device(s->coefficients.get() + 2 * terms, step.weight, sz(terms),
                 "copy of the coefficients");
  soe_kernel<<<grid_blocks(s->points, threads_per_block), threads_per_block>>>(
      s->points, terms, s->coefficients.get(), s->increment.get(), s->current.get(), s->next.get(),
      s->history.get());
  cuda_sync_check("soe history kernel");
  copy_to_host(step.history, s->history.get(), sz(s->points), "copy of the history");
  // Only now do the new modes become the state: a failure above left `current` intact.
  std::swap(s->current, s->next);
}

void l1_direct_step(L1HistoryDevice::State* s, const double* increment, std::int64_t slot,
                    const L1DirectStep& step) {
  DeviceGuard guard(s->device);
  copy_to_device(s->current.get() + slot * s->points, increment, sz(s->points),
                 "copy of the increment");
  copy_to_device(s->coefficients.get(), step.weights, sz(step.levels), "copy of the weights");
  direct_kernel<<<grid_blocks(s->points, threads_per_block), threads_per_block>>>(
      s->points, step.levels, s->coefficients.get(), s->current.get(), s->history.get());
  cuda_sync_check("direct history kernel");
  copy_to_host(step.history, s->history.get(), sz(s->points), "copy of the history");
}

}  // namespace cuda
}  // namespace fracmfg::kernels
