// kernels::MfgRowsDevice: the argument checks, then the CUDA translation unit when this
// build has one, else NotCompiled.
#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/kernels/mfg_rows.hpp"

#if FRACMFG_HAVE_CUDA
#include "kernels/cuda/mfg_rows_cuda.hpp"
#endif

namespace fracmfg::kernels {

namespace {

void destroy_state(MfgRowsDevice::State* state) {
#if FRACMFG_HAVE_CUDA
  cuda::mfg_rows_destroy(state);
#else
  (void)state;  // never created without CUDA
#endif
}

#if !FRACMFG_HAVE_CUDA
[[noreturn]] void not_compiled() {
  throw NotCompiled("the CUDA backend (mfg_rows)", {"cpu"});
}
#endif

}  // namespace

MfgRowsDevice::MfgRowsDevice(int device) : device_(device), state_(nullptr, destroy_state) {}
MfgRowsDevice::~MfgRowsDevice() = default;
MfgRowsDevice::MfgRowsDevice(MfgRowsDevice&&) noexcept = default;
MfgRowsDevice& MfgRowsDevice::operator=(MfgRowsDevice&&) noexcept = default;

double MfgRowsDevice::hjb(const HjbRowsCall& c) {
  check_hjb_rows(c, "MfgRowsDevice::hjb");
  if (mfg_block_points(c.block) == 0) return 0.0;
#if FRACMFG_HAVE_CUDA
  if (!state_) state_.reset(cuda::mfg_rows_create(device_));
  return cuda::mfg_hjb_rows(state_.get(), c);
#else
  not_compiled();
#endif
}

void MfgRowsDevice::fp(const FpRowsCall& c) {
  check_fp_rows(c, "MfgRowsDevice::fp");
  if (c.block.size[0] == 0) return;
#if FRACMFG_HAVE_CUDA
  if (!state_) state_.reset(cuda::mfg_rows_create(device_));
  cuda::mfg_fp_rows(state_.get(), c);
#else
  not_compiled();
#endif
}

}  // namespace fracmfg::kernels
