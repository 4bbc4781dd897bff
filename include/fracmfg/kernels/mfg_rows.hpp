#pragma once
// kernels::mfg_hjb_rows and kernels::mfg_fp_rows: the finite-difference rows of the mean
// field game solvers (mfg/stencil.hpp, mfg/direct_1d.hpp) over a rank's owned points,
// node-local. Per owned point, with the upwind numerical Hamiltonian of mfg/hamiltonian.hpp:
//
//   mfg_hjb_rows  the HJB residual
//                   r = (u - u_next)/dt - nu Lap_h u + H_h(x, D+u, D-u) - rhs
//                 (returns the sum of r^2 in the order of the points) and/or the row of its
//                 Jacobian J(u) = I/dt + L(u), in either of two layouts: interleaved,
//                 1 + 2 dim values per point [diag, west, east(, south, north(, down, up))]
//                 (the COO layout of mfg::detail::RowIndices), or, in 1D, three arrays
//                 sub, diag, super (la::TridiagSolver's);
//   mfg_fp_rows   (1D) the rows of J(u)^T, the implicit Fokker-Planck operator: row q
//                 holds J(q-1, q), J(q, q), J(q+1, q) as sub, diag, super.
//
// What a call covers: the quadratic, power and congestion Hamiltonians (the congestion and
// quadratic forms are the quadratic form with a per-point coefficient), periodic and
// reflecting sides (a reflecting wall mirrors the neighbour onto the point and folds its
// coefficient into diag), 1D, 2D and 3D (the HJB rows; the Fokker-Planck rows in 1D, where
// the neighbours' coefficients come with ghosts). Not covered, and left to the solvers' own
// loops in mfg/stencil.cpp and mfg/fokker_planck.cpp: exit sides, obstacles, the nonlocal
// part of fractional diffusion (s < 2), and the 2D and 3D Fokker-Planck transpose gather.
//
// The values u are read either from the rank's ghosted box (a DMDA local array: the owned
// box plus the ghost points of its neighbours) or, in 1D, from the owned values with the two
// ghost values given (mfg::detail::Halo1d). The per-point bodies are
// kernels/mfg_rows_item.hpp, shared by both backends, so host and cuda agree up to the
// compilers' contraction of multiply-adds (and pow on the device for the power form).
//
// Entry points:
//   mfg_hjb_rows_host, mfg_fp_rows_host   Kokkos loops on the default host execution space
//                                         (needs Kokkos initialised).
//   MfgRowsDevice                         the cuda path on one device: per call the values
//                                         and coefficients are copied over and the residual
//                                         and rows back (nothing stays resident: the next
//                                         call's u comes from the host's solve); the device
//                                         arrays are kept and grow with the calls. Throws
//                                         NotCompiled in a build without CUDA and
//                                         fracmfg::Error ("CUDA ...") when the device fails;
//                                         the caller's outputs are then unspecified and the
//                                         host call redoes them.
// Not collective; synchronous.

#include <cstdint>
#include <memory>

namespace fracmfg::kernels {

/// A rank's owned block of a 1D, 2D or 3D grid and the layout u is read in.
struct MfgBlock {
  int dim = 1;                              ///< 1, 2 or 3
  std::int64_t points[3] = {1, 1, 1};       ///< global points per axis
  std::int64_t start[3] = {0, 0, 0};        ///< first owned point per axis
  std::int64_t size[3] = {1, 1, 1};         ///< owned points per axis (natural order, x fastest)
  std::int64_t ghost_start[3] = {0, 0, 0};  ///< the ghosted box's first point per axis
  std::int64_t ghost_size[3] = {1, 1, 1};   ///< the ghosted box's points per axis
  /// Reflecting (mirrored) sides, per axis and end (axis * 2 + end); the others periodic.
  bool mirror[6] = {false, false, false, false, false, false};
  double inv_h[3] = {1.0, 1.0, 1.0};  ///< 1 / spacing per axis
  /// 1D only: u holds the owned values alone and the two outer neighbours are these (at a
  /// reflecting wall the point's own value).
  bool owned_1d = false;
  double ghost_west = 0.0, ghost_east = 0.0;
};

/// Owned points of a block.
inline std::int64_t mfg_block_points(const MfgBlock& b) {
  return b.size[0] * (b.dim >= 2 ? b.size[1] : 1) * (b.dim == 3 ? b.size[2] : 1);
}

/// Values of u a call reads: the ghosted box, or the owned points (owned_1d).
std::int64_t mfg_block_values(const MfgBlock& b);

/// Entries per interleaved row: 1 + 2 dim.
inline int mfg_row_width(int dim) {
  return 1 + 2 * dim;
}

/// One HJB call over caller-owned host memory (a plain struct: the cuda path copies it with
/// its pointers replaced).
struct HjbRowsCall {
  MfgBlock block;
  double inv_dt = 1.0;  ///< 1 / time step
  double nu = 0.0;      ///< diffusion
  /// Per owned point: 1/c (congestion: 1 / (c (epsilon + m)^alpha)).
  const double* coef = nullptr;
  bool power = false;              ///< the power form coef s^(q/2) / q (else the quadratic form)
  double exponent = 2.0;           ///< q of the power form
  const double* u = nullptr;       ///< mfg_block_values(block) values
  const double* u_next = nullptr;  ///< owned (the residual)
  const double* rhs = nullptr;     ///< owned (the residual)
  double* residual = nullptr;      ///< out, owned; null: no residual
  /// Out, interleaved rows (mfg_row_width(dim) per point); null: none or the three arrays.
  double* rows = nullptr;
  /// Out, 1D rows as three owned arrays (all three or none).
  double* sub = nullptr;
  double* diag = nullptr;
  double* super = nullptr;
};

/// One Fokker-Planck call (1D; u and inv_c as owned values with their ghosts).
struct FpRowsCall {
  MfgBlock block;  ///< dim 1, owned_1d, its ghosts those of u
  double inv_dt = 1.0;
  double nu = 0.0;
  const double* u = nullptr;
  /// The coefficient of the linearised Hamiltonian at the owned points (1/c for the
  /// quadratic form) and its two ghosts (as for u).
  const double* inv_c = nullptr;
  double inv_c_west = 0.0, inv_c_east = 0.0;
  double* sub = nullptr;  ///< out: J(q-1, q)
  double* diag = nullptr;
  double* super = nullptr;  ///< out: J(q+1, q)
};

/// Input checks (fracmfg::Error naming the problem).
void check_hjb_rows(const HjbRowsCall& c, const char* caller);
void check_fp_rows(const FpRowsCall& c, const char* caller);

/// Host backend. Returns the sum of r^2 over the points in their natural order (0 without a
/// residual).
double mfg_hjb_rows_host(const HjbRowsCall& c);
void mfg_fp_rows_host(const FpRowsCall& c);

/// The cuda path of both kernels on one device, its arrays kept between calls.
class MfgRowsDevice {
 public:
  /// Allocates nothing yet; device: the runtime device index.
  explicit MfgRowsDevice(int device);
  ~MfgRowsDevice();
  MfgRowsDevice(MfgRowsDevice&&) noexcept;
  MfgRowsDevice& operator=(MfgRowsDevice&&) noexcept;
  MfgRowsDevice(const MfgRowsDevice&) = delete;
  MfgRowsDevice& operator=(const MfgRowsDevice&) = delete;

  /// As mfg_hjb_rows_host (the sum of r^2 formed on the host from the copied residual, in
  /// the same order).
  double hjb(const HjbRowsCall& c);
  void fp(const FpRowsCall& c);

  struct State;

 private:
  int device_ = 0;
  std::unique_ptr<State, void (*)(State*)> state_;
};

}  // namespace fracmfg::kernels
