// kernels::ParticleDevice: the argument checks and the state's bookkeeping, then the CUDA
// translation unit when this build has one, else NotCompiled.
#include <cstdint>
#include <string>

#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/kernels/particle_step.hpp"

#if FRACMFG_HAVE_CUDA
#include "kernels/cuda/particle_step_cuda.hpp"
#endif

namespace fracmfg::kernels {

namespace {

void destroy_state(ParticleDevice::State* state) {
#if FRACMFG_HAVE_CUDA
  cuda::particles_destroy(state);
#else
  (void)state;  // never created without CUDA
#endif
}

#if !FRACMFG_HAVE_CUDA
[[noreturn]] void not_compiled() {
  throw NotCompiled("the CUDA backend (particle_step)", {"cpu"});
}
#endif

std::int64_t grid_points(int dim, const ParticleAxis& x, const ParticleAxis& y) {
  return dim == 2 ? x.points * y.points : x.points;
}

}  // namespace

ParticleDevice::ParticleDevice(int device, int dim, const ParticleAxis& x_axis,
                               const ParticleAxis& y_axis)
    : device_(device), dim_(dim), state_(nullptr, destroy_state) {
  if ((dim != 1 && dim != 2) || x_axis.points < 1 || (dim == 2 && y_axis.points < 1)) {
    throw Error("ParticleDevice: a 1D or 2D grid with at least one point per axis expected");
  }
  points_ = grid_points(dim, x_axis, y_axis);
  x_faces_ = particle_faces(x_axis) * (dim == 2 ? y_axis.points : 1);
  y_faces_ = dim == 2 ? x_axis.points * particle_faces(y_axis) : 0;
}

ParticleDevice::~ParticleDevice() = default;
ParticleDevice::ParticleDevice(ParticleDevice&&) noexcept = default;
ParticleDevice& ParticleDevice::operator=(ParticleDevice&&) noexcept = default;

double ParticleDevice::device_bytes(int dim, std::int64_t count, std::int64_t grid_points,
                                    std::int64_t faces) {
  // Two buffers of positions per axis; cdf, 1/c and the bins per point; the faces.
  return 8.0 * (2.0 * static_cast<double>(dim) * static_cast<double>(count) +
                3.0 * static_cast<double>(grid_points) + static_cast<double>(faces));
}

bool ParticleDevice::resident() const {
  return resident_;
}

std::int64_t ParticleDevice::count() const {
  return count_;
}

bool ParticleDevice::has_constants() const {
  return constants_;
}

void ParticleDevice::drop() {
  resident_ = false;
  count_ = 0;
}

#if FRACMFG_HAVE_CUDA
namespace {
ParticleDevice::State* create(int device, int dim, std::int64_t points, std::int64_t x_faces,
                              std::int64_t y_faces) {
  return cuda::particles_create(device, dim, points, x_faces, y_faces);
}
}  // namespace
#endif

void ParticleDevice::set_constants(const double* cdf, const double* inv_c) {
  if (cdf == nullptr || inv_c == nullptr) {
    throw Error("ParticleDevice::set_constants: null cdf or 1/c");
  }
#if FRACMFG_HAVE_CUDA
  if (!state_) state_.reset(create(device_, dim_, points_, x_faces_, y_faces_));
  constants_ = false;
  cuda::particles_set_constants(state_.get(), cdf, inv_c);
  constants_ = true;
#else
  not_compiled();
#endif
}

void ParticleDevice::upload(const double* x, const double* y, std::int64_t count) {
  if (count < 0 || (count > 0 && (x == nullptr || (dim_ == 2 && y == nullptr)))) {
    throw Error("ParticleDevice::upload: " + std::to_string(count) + " particles, null positions");
  }
#if FRACMFG_HAVE_CUDA
  if (!state_) state_.reset(create(device_, dim_, points_, x_faces_, y_faces_));
  resident_ = false;  // until the copy succeeded
  cuda::particles_reserve(state_.get(), count);
  cuda::particles_upload(state_.get(), x, y, count);
  count_ = count;
  resident_ = true;
#else
  not_compiled();
#endif
}

void ParticleDevice::download(double* x, double* y) const {
  if (!resident_) throw Error("ParticleDevice::download: no particles on the device");
  if (count_ > 0 && (x == nullptr || (dim_ == 2 && y == nullptr))) {
    throw Error("ParticleDevice::download: null positions");
  }
#if FRACMFG_HAVE_CUDA
  cuda::particles_download(state_.get(), x, y, count_);
#else
  (void)x;
  (void)y;
  not_compiled();
#endif
}

void ParticleDevice::run(const ParticleStep& s) {
  constexpr const char* who = "ParticleDevice::run";
  check_particle_step(s, true, who);
  const std::int64_t xf = particle_faces(s.axis[0]) * (s.dim == 2 ? s.axis[1].points : 1);
  const std::int64_t yf = s.dim == 2 ? s.axis[0].points * particle_faces(s.axis[1]) : 0;
  if (s.dim != dim_ || grid_points(s.dim, s.axis[0], s.axis[1]) != points_ || xf != x_faces_ ||
      yf != y_faces_) {
    throw Error(std::string(who) + ": the call's grid is not the device's");
  }
  if (!constants_) throw Error(std::string(who) + ": set_constants() first");
  if (!s.draw && (!resident_ || s.count != count_)) {
    throw Error(std::string(who) + ": " + std::to_string(s.count) + " particles asked, " +
                std::to_string(resident_ ? count_ : 0) + " resident");
  }
#if FRACMFG_HAVE_CUDA
  if (s.draw) {
    // A draw replaces the positions, and growing the room frees them: a failure from here
    // on leaves nothing resident (the host redraws them).
    resident_ = false;
    cuda::particles_reserve(state_.get(), s.count);
  }
  cuda::particles_run(state_.get(), s);
  count_ = s.count;
  resident_ = true;
#else
  not_compiled();
#endif
}

}  // namespace fracmfg::kernels
