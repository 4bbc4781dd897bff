#pragma once
// kernels::particle_step: one call of the particle Fokker-Planck method (mfg/particles.hpp)
// over a rank's particles, node-local. Per particle p (id = first + p), in this order:
//
//   draw  (optional) X from m0: the cell by its cumulative mass `cdf`, the position uniform
//         inside it (Philox counter (id, 0, 1), in 2D also (id, 0, 2));
//   move  (optional) one Euler-Maruyama step
//             X <- X - grad u(X) / c(X) dt + noise xi,   noise = sqrt(2 nu dt),
//         grad u interpolated from the one-sided differences on the cell faces, 1/c from the
//         grid points, xi standard normal per axis from the Philox counter (id, step, 0);
//         reflected at reflecting walls, wrapped on periodic axes;
//   bin   (when `bins` is given) the particle's mass, 2^32 in fixed point, split linearly
//         (cloud in cell) among the two (1D) or four (2D) grid points around it.
//
// The random numbers are a function of (seed, id, step, stream) only, so a particle's path
// does not depend on where (or on which backend) it moves, and the integer bins are exact
// sums, the same for any order of the particles. The per-particle bodies are
// kernels/particle_item.hpp, shared by both backends: host and cuda positions agree up to
// the compilers' contraction of multiply-adds and the device's libm (log, sin, cos), and the
// bins up to one unit of 2^-32 per particle.
//
// Entry points:
//   particle_step_host   Kokkos loops on the default host execution space over the
//                        particles (draw and move, then bin; needs Kokkos initialised); the
//                        positions are s.x, s.y.
//   ParticleDevice       the cuda path with the positions resident on one device: a draw
//                        creates them there, upload() places host positions, each call copies
//                        only the face differences of grad u over and the bins back,
//                        download() brings the positions home. The counters need no
//                        storage (they are the ids and the step). Throws NotCompiled in a
//                        build without CUDA and fracmfg::Error ("CUDA ...") when the device
//                        fails; a failed call leaves the resident positions as they were
//                        (they are double-buffered), so the caller can download them and
//                        redo the call on the host.
// Not collective; synchronous.

#include <cstdint>
#include <memory>

namespace fracmfg::kernels {

/// One axis of the particles' grid: points origin + j spacing, j < points, in the domain
/// [0, length] (reflecting: walls at 0 and length; periodic: length is one period).
struct ParticleAxis {
  double origin = 0.0;
  double spacing = 1.0;
  double length = 1.0;
  std::int64_t points = 1;
  bool periodic = true;
};

/// Face differences of grad u along an axis: periodic axes have `points` faces (at
/// (k + 1/2) spacing), reflecting ones points + 1 (at k spacing, the walls included).
inline std::int64_t particle_faces(const ParticleAxis& a) {
  return a.periodic ? a.points : a.points + 1;
}

/// One call over caller-owned host memory (a plain struct: the cuda path copies it to the
/// device with its pointers replaced).
struct ParticleStep {
  int dim = 1;           ///< 1 or 2
  ParticleAxis axis[2];  ///< axis[1] unused in 1D
  std::uint64_t seed = 1;
  std::int64_t first = 0;  ///< id of particle 0 of this call
  std::int64_t count = 0;  ///< particles, >= 0
  bool draw = false;       ///< draw the positions from m0 first (the input positions unused)
  bool move = false;       ///< then one Euler-Maruyama step
  std::uint32_t step = 0;  ///< the noise counter of the move (level n + 1 for u^n)
  double dt = 0.0;         ///< time step
  double noise = 0.0;      ///< sqrt(2 nu dt)
  /// Cumulative mass of m0 over the grid points in natural order (draw): nondecreasing.
  const double* cdf = nullptr;
  /// 1/c at the grid points, natural order (move).
  const double* inv_c = nullptr;
  /// (u_{i+1} - u_i) / h on the x faces, row j at j * particle_faces(axis[0]) (move).
  const double* dx_face = nullptr;
  /// (u_{j+1} - u_j) / h on the y faces, face row k at k * axis[0].points (move, 2D).
  const double* dy_face = nullptr;
  /// Positions, count values each (in/out; y unused in 1D). The device path ignores them
  /// (its positions are the resident ones).
  double* x = nullptr;
  double* y = nullptr;
  /// Out (may be null: no binning): the mass per grid point in units of 2^-32 particles,
  /// overwritten.
  std::int64_t* bins = nullptr;
};

/// Grid points of the call's grid (axis[0].points x axis[1].points in 2D).
std::int64_t particle_grid_points(const ParticleStep& s);
/// Doubles of dx_face and dy_face.
std::int64_t particle_x_faces(const ParticleStep& s);
std::int64_t particle_y_faces(const ParticleStep& s);

/// Input checks (fracmfg::Error naming the problem); `device`: the positions are resident.
void check_particle_step(const ParticleStep& s, bool device, const char* caller);

void particle_step_host(const ParticleStep& s);

/// The particles of one rank on a CUDA device: positions (double-buffered), the grid's
/// constants (cdf, 1/c), the face differences and the bins.
class ParticleDevice {
 public:
  /// Allocates nothing yet. device: the runtime device index; the grid of the calls.
  ParticleDevice(int device, int dim, const ParticleAxis& x_axis, const ParticleAxis& y_axis);
  ~ParticleDevice();
  ParticleDevice(ParticleDevice&&) noexcept;
  ParticleDevice& operator=(ParticleDevice&&) noexcept;
  ParticleDevice(const ParticleDevice&) = delete;
  ParticleDevice& operator=(const ParticleDevice&) = delete;

  /// Device bytes of `count` particles on this grid (the Workload's device_bytes).
  static double device_bytes(int dim, std::int64_t count, std::int64_t grid_points,
                             std::int64_t faces);

  /// True after upload() or a drawing run() until drop(): the device holds the
  /// authoritative positions.
  bool resident() const;
  /// Particles held (valid while resident).
  std::int64_t count() const;
  /// Copies the grid's constants (cdf and 1/c, grid points each) to the device; they stay
  /// there for every later call.
  void set_constants(const double* cdf, const double* inv_c);
  bool has_constants() const;
  /// Copies `count` host positions to the device (y ignored in 1D); resident afterwards.
  void upload(const double* x, const double* y, std::int64_t count);
  /// Copies the resident positions to x, y (count() values each; y ignored in 1D).
  void download(double* x, double* y) const;
  /// Forgets the device copy (the memory is kept for the next placement).
  void drop();
  /// One call on the resident positions (or, with s.draw, on positions created here):
  /// s.x, s.y, s.cdf and s.inv_c are ignored; s.dx_face, s.dy_face (host) are copied over,
  /// s.bins (host) filled. Needs set_constants(); without s.draw, resident positions of
  /// s.count particles.
  void run(const ParticleStep& s);

  struct State;

 private:
  int device_ = 0;
  int dim_ = 1;
  std::int64_t points_ = 0;
  std::int64_t x_faces_ = 0;
  std::int64_t y_faces_ = 0;
  std::int64_t count_ = 0;
  bool resident_ = false;
  bool constants_ = false;
  std::unique_ptr<State, void (*)(State*)> state_;
};

}  // namespace fracmfg::kernels
