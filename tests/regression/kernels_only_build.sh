#!/usr/bin/env bash
# The kernel layer builds on its own (cmake/kernels_only), with MPI and PETSc not findable,
# as scripts/gpu-check builds it on a machine with CUDA but none of the project's other
# dependencies: configures it in a temporary directory, builds the library and the
# benchmark, checks that no compiled file included an MPI, PETSc or HDF5 header, and runs
# the benchmark at small sizes (report and performance model written). Device code for one
# architecture only (FRACMFG_KERNELS_ONLY_ARCH, default 75): the main build compiles every
# architecture of cmake/FracmfgCuda.cmake; here the layer's standalone build is the subject.
#   kernels_only_build.sh SOURCE_DIR [JOBS]
set -euo pipefail
src=$1
jobs=${2:-2}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fracmfg-kernels-only-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$src/cmake/kernels_only" -B "$tmp/build" -DFRACMFG_BUILD_TESTS=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DCMAKE_DISABLE_FIND_PACKAGE_PETSc=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_HDF5=ON -DCMAKE_CUDA_ARCHITECTURES="${FRACMFG_KERNELS_ONLY_ARCH:-75}" \
  "${launcher[@]+"${launcher[@]}"}" >"$tmp/configure.log" 2>&1 || {
  cat "$tmp/configure.log"; echo "kernels_only_build: FAILED: configure"; exit 1; }
grep -E 'fracmfg: CUDA backend' "$tmp/configure.log" || true
cmake --build "$tmp/build" -j "$jobs" --target fracmfg_kernels kernels_gpu_bench >"$tmp/build.log" 2>&1 || {
  tail -n 40 "$tmp/build.log"; echo "kernels_only_build: FAILED: build"; exit 1; }
if found=$(grep -rlE '(^|[/ ])(mpi|petsc[A-Za-z]*|hdf5|H5[A-Za-z]*)\.h( |$)' --include='*.d' "$tmp/build"); then
  echo "$found"; echo "kernels_only_build: FAILED: an MPI, PETSc or HDF5 header was included"; exit 1
fi
"$tmp/build/kernels_gpu_bench" --max 1e3 --repeats 1 --out "$tmp/report.md" --model-dir "$tmp/model" \
  2>"$tmp/bench.log" || { cat "$tmp/bench.log"; echo "kernels_only_build: FAILED: benchmark"; exit 1; }
probe_rc=0
"$tmp/build/kernels_gpu_bench" --probe || probe_rc=$?
[[ $probe_rc -eq 0 || $probe_rc -eq 3 ]] || { echo "kernels_only_build: FAILED: --probe exit $probe_rc"; exit 1; }
grep -q '^# fracmfg GPU check' "$tmp/report.md" || { echo "kernels_only_build: FAILED: no report"; exit 1; }
ls "$tmp"/model/*.perf >/dev/null || { echo "kernels_only_build: FAILED: no model file"; exit 1; }
echo "kernels_only_build: the kernel layer builds and runs without MPI, PETSc and HDF5"
