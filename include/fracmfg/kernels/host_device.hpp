#pragma once
// FRACMFG_HOST_DEVICE marks a kernel body that is compiled for the host and, under nvcc, for
// the device as well: `__host__ __device__` when the translation unit is compiled by nvcc,
// nothing otherwise. Kernel bodies are written once per work item with this marker; the
// Kokkos host loop and the CUDA launch only map work items onto them, so both backends run
// the same arithmetic.
//
// A body marked FRACMFG_HOST_DEVICE uses only what both sides offer: arithmetic, <cmath>
// functions from the global namespace that CUDA provides as device functions (exp, sqrt,
// floor, fabs), no exceptions, no allocation, no standard containers.

#if defined(__CUDACC__)
#define FRACMFG_HOST_DEVICE __host__ __device__
#else
#define FRACMFG_HOST_DEVICE
#endif
