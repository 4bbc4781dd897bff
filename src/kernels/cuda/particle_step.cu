// CUDA backend of kernels::particle_step: the positions resident on the device
// (double-buffered), one thread per particle running the host's bodies
// (kernels/particle_item.hpp), the fixed-point bins added with 64-bit integer atomics (exact,
// so their order does not matter).
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <utility>

#include "kernels/cuda/cuda_handles.hpp"
#include "kernels/cuda/particle_step_cuda.hpp"
#include "kernels/particle_item.hpp"

namespace fracmfg::kernels {

struct ParticleDevice::State {
  int device = 0;
  int dim = 1;
  std::int64_t points = 0;
  std::int64_t x_faces = 0;
  std::int64_t y_faces = 0;
  std::int64_t capacity = 0;
  cuda::DeviceArray<double> x, y;            ///< current positions
  cuda::DeviceArray<double> x_next, y_next;  ///< written by a drawing or moving call
  cuda::DeviceArray<double> cdf, inv_c, dx_face, dy_face;
  cuda::DeviceArray<unsigned long long> bins;

  ~State() {
    cuda::QuietDeviceGuard guard(device);
    x.reset();
    y.reset();
    x_next.reset();
    y_next.reset();
    cdf.reset();
    inv_c.reset();
    dx_face.reset();
    dy_face.reset();
    bins.reset();
  }
};

namespace cuda {

namespace {

constexpr unsigned threads_per_block = 256;

static_assert(sizeof(unsigned long long) == sizeof(std::int64_t), "64-bit bins");

template <int Dim, bool Draw, bool Move>
__global__ void particle_kernel(ParticleStep s, const double* x_in, const double* y_in,
                                double* x_out, double* y_out, unsigned long long* bins) {
  for (std::int64_t p = global_thread(); p < s.count; p += grid_threads()) {
    std::int64_t index[4];
    std::int64_t mass[4];
    const int n =
        detail::particle_item<Dim, Draw, Move>(s, p, x_in, y_in, x_out, y_out, index, mass);
    for (int k = 0; k < n; ++k) {
      // Two's complement: the unsigned sum has the bits of the signed one.
      atomicAdd(bins + index[k], static_cast<unsigned long long>(mass[k]));
    }
  }
}

std::size_t sz(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

}  // namespace

ParticleDevice::State* particles_create(int device, int dim, std::int64_t points,
                                        std::int64_t x_faces, std::int64_t y_faces) {
  DeviceGuard guard(device);
  auto s = std::make_unique<ParticleDevice::State>();
  s->device = device;
  s->dim = dim;
  s->points = points;
  s->x_faces = x_faces;
  s->y_faces = y_faces;
  s->cdf = device_alloc<double>(sz(points), "cudaMalloc (cdf of m0)");
  s->inv_c = device_alloc<double>(sz(points), "cudaMalloc (1/c)");
  s->dx_face = device_alloc<double>(sz(x_faces), "cudaMalloc (face differences)");
  s->dy_face = device_alloc<double>(sz(y_faces), "cudaMalloc (face differences)");
  s->bins = device_alloc<unsigned long long>(sz(points), "cudaMalloc (bins)");
  return s.release();
}

void particles_destroy(ParticleDevice::State* state) noexcept {
  delete state;
}

void particles_reserve(ParticleDevice::State* s, std::int64_t count) {
  if (count <= s->capacity) return;
  DeviceGuard guard(s->device);
  s->capacity = 0;
  s->x.reset();
  s->x_next.reset();
  s->y.reset();
  s->y_next.reset();
  s->x = device_alloc<double>(sz(count), "cudaMalloc (particle positions)");
  s->x_next = device_alloc<double>(sz(count), "cudaMalloc (particle positions)");
  if (s->dim == 2) {
    s->y = device_alloc<double>(sz(count), "cudaMalloc (particle positions)");
    s->y_next = device_alloc<double>(sz(count), "cudaMalloc (particle positions)");
  }
  s->capacity = count;
}

void particles_set_constants(ParticleDevice::State* s, const double* cdf, const double* inv_c) {
  DeviceGuard guard(s->device);
  copy_to_device(s->cdf.get(), cdf, sz(s->points), "copy of the cdf of m0");
  copy_to_device(s->inv_c.get(), inv_c, sz(s->points), "copy of 1/c");
}

void particles_upload(ParticleDevice::State* s, const double* x, const double* y,
                      std::int64_t count) {
  DeviceGuard guard(s->device);
  copy_to_device(s->x.get(), x, sz(count), "copy of the particle positions");
  if (s->dim == 2) copy_to_device(s->y.get(), y, sz(count), "copy of the particle positions");
}

void particles_download(const ParticleDevice::State* s, double* x, double* y, std::int64_t count) {
  DeviceGuard guard(s->device);
  copy_to_host(x, s->x.get(), sz(count), "copy of the particle positions");
  if (s->dim == 2) copy_to_host(y, s->y.get(), sz(count), "copy of the particle positions");
}

void particles_run(ParticleDevice::State* s, const ParticleStep& step) {
  DeviceGuard guard(s->device);
  ParticleStep d = step;
  d.cdf = s->cdf.get();
  d.inv_c = s->inv_c.get();
  d.x = nullptr;
  d.y = nullptr;
  if (step.move) {
    copy_to_device(s->dx_face.get(), step.dx_face, sz(s->x_faces), "copy of the face differences");
    copy_to_device(s->dy_face.get(), step.dy_face, sz(s->y_faces), "copy of the face differences");
  }
  d.dx_face = s->dx_face.get();
  d.dy_face = s->dy_face.get();
  unsigned long long* bins = nullptr;
  if (step.bins != nullptr) {
    bins = s->bins.get();
    cuda_check(cudaMemset(bins, 0, sz(s->points) * sizeof(unsigned long long)),
               "cudaMemset (bins)");
    d.bins = reinterpret_cast<std::int64_t*>(bins);  // a non-null marker for the item body
  }
  if (step.count > 0) {
    const unsigned blocks = grid_blocks(step.count, threads_per_block);
    detail::particle_kind(step, [&](auto kind) {
      using Kind = decltype(kind);
      particle_kernel<Kind::dim, Kind::draw, Kind::move><<<blocks, threads_per_block>>>(
          d, s->x.get(), s->y.get(), s->x_next.get(), s->y_next.get(), bins);
    });
    cuda_sync_check("particle step kernel");
  }
  if (step.bins != nullptr) {
    copy_to_host(reinterpret_cast<unsigned long long*>(step.bins), bins, sz(s->points),
                 "copy of the bins");
  }
  // Only now do the new positions become the state: a failure above left them intact.
  if (step.draw || step.move) {
    std::swap(s->x, s->x_next);
    std::swap(s->y, s->y_next);
  }
}

}  // namespace cuda
}  // namespace fracmfg::kernels
