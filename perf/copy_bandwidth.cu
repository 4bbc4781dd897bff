// Host-device copy bandwidth with pageable (malloc'd, touched) and pinned (cudaMallocHost)
// host memory, both directions, and a device-to-device copy as the ceiling. Standalone (not
// part of the CMake build): what the per-call copies of the non-resident kernels (the MFG
// rows, the tridiagonal solve) could gain from pinned staging buffers.
//
//   nvcc -O2 -arch=sm_90 perf/copy_bandwidth.cu -o copy_bandwidth && ./copy_bandwidth
//
// Per size: the median of 7 timed copies after one warm-up, timed with CUDA events; GB/s
// counts the bytes copied once (device-to-device: read plus write). Exit 1 on a CUDA error.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "copy_bandwidth: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Median seconds of `reps` copies of `bytes` from src to dst.
double time_copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, int reps) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  check(cudaMemcpy(dst, src, bytes, kind), "warm-up copy");
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    check(cudaEventRecord(a), "cudaEventRecord");
    check(cudaMemcpy(dst, src, bytes, kind), "cudaMemcpy");
    check(cudaEventRecord(b), "cudaEventRecord");
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    t.push_back(1e-3 * ms);
  }
  check(cudaEventDestroy(a), "cudaEventDestroy");
  check(cudaEventDestroy(b), "cudaEventDestroy");
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main() {
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s\n\n", prop.name);
  std::printf("| MiB | pageable H2D | pinned H2D | pageable D2H | pinned D2H | D2D (r+w) |\n");
  std::printf("|---|---|---|---|---|---|\n");
  const int reps = 7;
  for (size_t mib : {8, 64, 512, 2048}) {
    const size_t bytes = mib << 20;
    char* pageable = static_cast<char*>(std::malloc(bytes));
    if (pageable == nullptr) {
      std::fprintf(stderr, "copy_bandwidth: malloc of %zu MiB failed\n", mib);
      return 1;
    }
    for (size_t i = 0; i < bytes; ++i) pageable[i] = static_cast<char>(i * 2654435761u >> 13);
    char* pinned = nullptr;
    check(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
    std::memcpy(pinned, pageable, bytes);
    char *dev = nullptr, *dev2 = nullptr;
    check(cudaMalloc(&dev, bytes), "cudaMalloc");
    check(cudaMalloc(&dev2, bytes), "cudaMalloc");
    const double gb = static_cast<double>(bytes) * 1e-9;
    const double h2d_page = time_copy(dev, pageable, bytes, cudaMemcpyHostToDevice, reps);
    const double h2d_pin = time_copy(dev, pinned, bytes, cudaMemcpyHostToDevice, reps);
    const double d2h_page = time_copy(pageable, dev, bytes, cudaMemcpyDeviceToHost, reps);
    const double d2h_pin = time_copy(pinned, dev, bytes, cudaMemcpyDeviceToHost, reps);
    const double d2d = time_copy(dev2, dev, bytes, cudaMemcpyDeviceToDevice, reps);
    std::printf("| %zu | %.1f GB/s | %.1f GB/s | %.1f GB/s | %.1f GB/s | %.0f GB/s |\n", mib,
                gb / h2d_page, gb / h2d_pin, gb / d2h_page, gb / d2h_pin, 2.0 * gb / d2d);
    check(cudaFree(dev), "cudaFree");
    check(cudaFree(dev2), "cudaFree");
    check(cudaFreeHost(pinned), "cudaFreeHost");
    std::free(pageable);
  }
  return 0;
}
