#pragma once
// kernels::l1_history: the history term of the L1 scheme for the Caputo derivative of order
// alpha in (0, 1) on a grid of `points` values (frac::L1History forms it once per time step
// of the time-fractional PDE solver), node-local. Two algorithms:
//
//   soe     sum of exponentials: `terms` modes H_j (each a grid of points) advanced by
//               H_j <- e_j H_j + q_j du,       history = sum_j c_j H_j
//           per point (du the step's increment u^n - u^(n-1); e_j, q_j, c_j the step's
//           decays, injections and weights, frac/fpde_history.cpp). O(terms x points) per
//           step, memory independent of the step count.
//   direct  the L1 sum over all past increments:
//               history = sum_{k < levels} w_k du^(k+1)
//           O(levels x points) per step; the past increments are kept.
//
// Per point, both backends run the same arithmetic in the same order (the bodies of
// kernels/l1_history_item.hpp), so host and cuda results agree up to the compilers'
// contraction of multiply-adds.
//
// Entry points:
//   soe_history_host, l1_direct_host   Kokkos loops on the default host execution space
//                                       (needs Kokkos initialised) over blocks of points.
//   L1HistoryDevice                     the cuda path with the state (modes or past
//                                       increments) resident on one device: upload() places
//                                       it, each step copies only the increment (and the
//                                       step's coefficients or weights) over and the history
//                                       back, download() brings the state home when the
//                                       caller moves the work to the host. Throws
//                                       NotCompiled in a build without CUDA and
//                                       fracmfg::Error ("CUDA ...") when the device fails; a
//                                       failed step leaves the resident state as it was
//                                       (soe modes are double-buffered, an appended increment
//                                       counts only once the step succeeded), so the caller
//                                       can download it and redo the step on the host.
// Not collective; synchronous.

#include <cstdint>
#include <memory>

namespace fracmfg::kernels {

/// One step of the soe algorithm over caller-owned host memory.
struct SoeHistoryStep {
  std::int64_t points = 0;            ///< grid values, >= 0
  std::int64_t terms = 0;             ///< modes, >= 0
  const double* decay = nullptr;      ///< e_j, `terms` values
  const double* inject = nullptr;     ///< q_j, `terms` values
  const double* weight = nullptr;     ///< c_j, `terms` values
  const double* increment = nullptr;  ///< du, `points` values
  /// Mode j at modes + j * points (in/out); the device path ignores it (its modes are the
  /// resident ones).
  double* modes = nullptr;
  double* history = nullptr;  ///< out: `points` values
};

/// One step of the direct algorithm: history = sum_{k < levels} weights[k] * past_k.
struct L1DirectStep {
  std::int64_t points = 0;          ///< grid values, >= 0
  std::int64_t levels = 0;          ///< past increments summed, >= 0
  const double* weights = nullptr;  ///< `levels` values
  /// Increment k at past + k * points; the device path ignores it (its past increments are
  /// the resident ones, the newest appended by the step).
  const double* past = nullptr;
  double* history = nullptr;  ///< out: `points` values
};

/// Input checks (fracmfg::Error naming the problem).
void check_soe_history(const SoeHistoryStep& step, const char* caller);
void check_l1_direct(const L1DirectStep& step, const char* caller);

void soe_history_host(const SoeHistoryStep& step);
void l1_direct_host(const L1DirectStep& step);

/// The algorithm an L1HistoryDevice serves.
enum class L1Algorithm : std::uint8_t { soe = 0, direct = 1 };

/// The state of one L1 history on a CUDA device: `capacity` vectors of `points` doubles
/// (soe: the modes, capacity = terms, held twice; direct: the past increments, capacity =
/// the steps of the run).
class L1HistoryDevice {
 public:
  /// Allocates nothing yet (the first upload does). device: the runtime device index.
  L1HistoryDevice(L1Algorithm algorithm, int device, std::int64_t points, std::int64_t capacity);
  ~L1HistoryDevice();
  L1HistoryDevice(L1HistoryDevice&&) noexcept;
  L1HistoryDevice& operator=(L1HistoryDevice&&) noexcept;
  L1HistoryDevice(const L1HistoryDevice&) = delete;
  L1HistoryDevice& operator=(const L1HistoryDevice&) = delete;

  /// Device bytes the state takes once uploaded (the Workload's device_bytes).
  static double device_bytes(L1Algorithm algorithm, std::int64_t points, std::int64_t capacity);

  /// True after upload() until drop(): the device holds the authoritative state.
  bool resident() const;
  /// Vectors currently held (valid while resident).
  std::int64_t vectors() const;
  /// Copies `vectors` <= capacity state vectors (vector k at host + k * points) to the device
  /// (allocating on first use); resident afterwards.
  void upload(const double* host, std::int64_t vectors);
  /// Copies the resident vectors to host + k * points (vectors() of them).
  void download(double* host) const;
  /// Forgets the device copy (the memory is kept for the next upload).
  void drop();
  /// Keeps the first `vectors` <= vectors() resident vectors (a caller redoing steps).
  void truncate(std::int64_t vectors);
  /// One soe step on the resident modes (vectors() must equal step.terms).
  void soe_step(const SoeHistoryStep& step);
  /// Appends `increment` (points values) as past increment number vectors(), then one
  /// direct step over levels = vectors() + 1 with step.weights.
  void direct_step(const double* increment, const L1DirectStep& step);

  struct State;

 private:
  L1Algorithm algorithm_ = L1Algorithm::soe;
  int device_ = 0;
  std::int64_t points_ = 0;
  std::int64_t capacity_ = 0;
  std::int64_t vectors_ = 0;
  bool resident_ = false;
  std::unique_ptr<State, void (*)(State*)> state_;
};

}  // namespace fracmfg::kernels
