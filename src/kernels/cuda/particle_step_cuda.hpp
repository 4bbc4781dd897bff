#pragma once
// Host-callable CUDA implementation of kernels::ParticleDevice (defined in particle_step.cu).
// Plain C++: the g++-compiled entry points include it.

#include <cstdint>

#include "fracmfg/kernels/particle_step.hpp"

namespace fracmfg::kernels::cuda {

/// Allocates the grid arrays of one rank's particles on `device` (cdf, 1/c, bins: `points`
/// values; the face differences: x_faces and y_faces); positions come with particles_reserve.
ParticleDevice::State* particles_create(int device, int dim, std::int64_t points,
                                        std::int64_t x_faces, std::int64_t y_faces);
void particles_destroy(ParticleDevice::State* state) noexcept;
/// Makes room for `count` particles (both position buffers); the positions held are lost
/// when the room grows.
void particles_reserve(ParticleDevice::State* state, std::int64_t count);
void particles_set_constants(ParticleDevice::State* state, const double* cdf, const double* inv_c);
void particles_upload(ParticleDevice::State* state, const double* x, const double* y,
                      std::int64_t count);
void particles_download(const ParticleDevice::State* state, double* x, double* y,
                        std::int64_t count);
/// One call (kernels::ParticleDevice::run); new positions become current only when the whole
/// call succeeded.
void particles_run(ParticleDevice::State* state, const ParticleStep& step);

}  // namespace fracmfg::kernels::cuda
