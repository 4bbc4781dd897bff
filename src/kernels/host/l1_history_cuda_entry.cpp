// kernels::L1HistoryDevice: the argument checks and the state's bookkeeping, then the CUDA
// translation unit when this build has one, else NotCompiled.
#include <cstdint>
#include <string>
#include <utility>

#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/kernels/l1_history.hpp"

#if FRACMFG_HAVE_CUDA
#include "kernels/cuda/l1_history_cuda.hpp"
#endif

namespace fracmfg::kernels {

namespace {

void destroy_state(L1HistoryDevice::State* state) {
#if FRACMFG_HAVE_CUDA
  cuda::l1_destroy(state);
#else
  (void)state;  // never created without CUDA
#endif
}

#if !FRACMFG_HAVE_CUDA
[[noreturn]] void not_compiled() {
  throw NotCompiled("the CUDA backend (l1_history)", {"cpu"});
}
#endif

}  // namespace

L1HistoryDevice::L1HistoryDevice(L1Algorithm algorithm, int device, std::int64_t points,
                                 std::int64_t capacity)
    : algorithm_(algorithm),
      device_(device),
      points_(points),
      capacity_(capacity),
      state_(nullptr, destroy_state) {
  if (points < 0 || capacity < 0) {
    throw Error("L1HistoryDevice: negative size (" + std::to_string(points) + " points, " +
                std::to_string(capacity) + " vectors)");
  }
}

L1HistoryDevice::~L1HistoryDevice() = default;
L1HistoryDevice::L1HistoryDevice(L1HistoryDevice&&) noexcept = default;
L1HistoryDevice& L1HistoryDevice::operator=(L1HistoryDevice&&) noexcept = default;

double L1HistoryDevice::device_bytes(L1Algorithm algorithm, std::int64_t points,
                                     std::int64_t capacity) {
  const double p = static_cast<double>(points);
  const double c = static_cast<double>(capacity);
  const bool soe = algorithm == L1Algorithm::soe;
  return 8.0 * ((soe ? 2.0 : 1.0) * c * p + 2.0 * p + (soe ? 3.0 : 1.0) * c);
}

bool L1HistoryDevice::resident() const {
  return resident_;
}

std::int64_t L1HistoryDevice::vectors() const {
  return vectors_;
}

void L1HistoryDevice::drop() {
  resident_ = false;
  vectors_ = 0;
}

void L1HistoryDevice::truncate(std::int64_t vectors) {
  if (!resident_ || vectors < 0 || vectors > vectors_) {
    throw Error("L1HistoryDevice::truncate: " + std::to_string(vectors) + " of " +
                std::to_string(resident_ ? vectors_ : 0) + " resident vectors");
  }
  vectors_ = vectors;
}

void L1HistoryDevice::upload(const double* host, std::int64_t vectors) {
  if (vectors < 0 || vectors > capacity_ || (vectors > 0 && points_ > 0 && host == nullptr)) {
    throw Error("L1HistoryDevice::upload: " + std::to_string(vectors) +
                " vectors for a capacity of " + std::to_string(capacity_));
  }
#if FRACMFG_HAVE_CUDA
  // Allocated on first use; the soe modes are double-buffered (a failed step keeps the old
  // ones) and need three coefficients per mode, the direct past one weight per level.
  if (!state_) {
    const bool soe = algorithm_ == L1Algorithm::soe;
    state_.reset(
        cuda::l1_create(device_, points_, capacity_, soe, soe ? 3 * capacity_ : capacity_));
  }
  cuda::l1_upload(state_.get(), host, vectors);
  vectors_ = vectors;
  resident_ = true;
#else
  not_compiled();
#endif
}

void L1HistoryDevice::download(double* host) const {
  if (!resident_) throw Error("L1HistoryDevice::download: no state on the device");
#if FRACMFG_HAVE_CUDA
  cuda::l1_download(state_.get(), host, vectors_);
#else
  (void)host;
  not_compiled();
#endif
}

void L1HistoryDevice::soe_step(const SoeHistoryStep& step) {
  constexpr const char* who = "L1HistoryDevice::soe_step";
  check_soe_history(step, who);
  if (algorithm_ != L1Algorithm::soe || !resident_ || step.points != points_ ||
      step.terms != vectors_) {
    throw Error(std::string(who) + ": the step does not match the resident modes (" +
                std::to_string(step.terms) + " terms of " + std::to_string(step.points) +
                " points, " + std::to_string(vectors_) + " resident of " + std::to_string(points_) +
                ")");
  }
  if (points_ == 0) return;
#if FRACMFG_HAVE_CUDA
  cuda::l1_soe_step(state_.get(), step);
#else
  not_compiled();
#endif
}

void L1HistoryDevice::direct_step(const double* increment, const L1DirectStep& step) {
  constexpr const char* who = "L1HistoryDevice::direct_step";
  check_l1_direct(step, who);
  if (algorithm_ != L1Algorithm::direct || !resident_ || step.points != points_ ||
      step.levels != vectors_ + 1 || vectors_ + 1 > capacity_ ||
      (points_ > 0 && increment == nullptr)) {
    throw Error(std::string(who) + ": the step does not match the resident past (" +
                std::to_string(step.levels) + " levels, " + std::to_string(vectors_) +
                " resident, capacity " + std::to_string(capacity_) + ")");
  }
#if FRACMFG_HAVE_CUDA
  if (points_ > 0) cuda::l1_direct_step(state_.get(), increment, vectors_, step);
  ++vectors_;  // the appended increment counts only once the step succeeded
#else
  not_compiled();
#endif
}

}  // namespace fracmfg::kernels
