#pragma once
// Host-callable CUDA implementation of kernels::MfgRowsDevice (defined in mfg_rows.cu).
// Plain C++: the g++-compiled entry points include it.

#include "fracmfg/kernels/mfg_rows.hpp"

namespace fracmfg::kernels::cuda {

/// The device arrays of one MfgRowsDevice on `device` (none allocated yet).
MfgRowsDevice::State* mfg_rows_create(int device);
void mfg_rows_destroy(MfgRowsDevice::State* state) noexcept;
/// One checked, non-empty call: inputs over, the launch, outputs back. Throws
/// fracmfg::Error ("CUDA ...") on a CUDA failure.
double mfg_hjb_rows(MfgRowsDevice::State* state, const HjbRowsCall& c);
void mfg_fp_rows(MfgRowsDevice::State* state, const FpRowsCall& c);

}  // namespace fracmfg::kernels::cuda
