#!/usr/bin/env bash
# The distributed tridiagonal solver (PC fracmfg_tridiag) against MUMPS, SuperLU_dist and
# GMRES+Jacobi at N unknowns on 1 and 2 ranks, periodic and not, for both test matrices of
# perf/bench_la_tridiag (random diagonally dominant rows; implicit diffusion step).
#
#   perf/la_tridiag_scaling.sh                     # Release build in build-la-rel, N = 10^6
#   perf/la_tridiag_scaling.sh build-rel 200000 "1 2 4"
#
# Arguments: build directory (default build-la-rel), N (default 1000000), rank counts
# (default "1 2"). Extra options for the benchmark go in BENCH_ARGS, e.g.
# BENCH_ARGS="-reps 20 -methods fracmfg_tridiag,mumps".
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build-la-rel}"
n="${2:-1000000}"
ranks="${3:-1 2}"
[[ "$build" = /* ]] || build="$here/$build"
bench="$build/perf/bench_la_tridiag"
if [[ ! -x "$bench" ]]; then
  echo "la_tridiag_scaling.sh: $bench not found; build it with" >&2
  echo "  cmake -S $here -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build --target bench_la_tridiag" >&2
  exit 1
fi

mpiexec_flags=()
if mpiexec --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
  mpiexec_flags+=(--oversubscribe)
  [[ "$(id -u)" = 0 ]] && mpiexec_flags+=(--allow-run-as-root)
fi

for problem in random diffusion; do
  # GMRES+Jacobi does not converge on the diffusion matrix (condition number ~2e8 at
  # N = 10^6): it would only spend its 2000 iterations, so it runs on the random matrix only.
  methods=fracmfg_tridiag,mumps,superlu_dist,gmres_jacobi
  [[ "$problem" = diffusion ]] && methods=fracmfg_tridiag,mumps,superlu_dist
  for periodic in false true; do
    for np in $ranks; do
      # shellcheck disable=SC2086
      mpiexec "${mpiexec_flags[@]}" -n "$np" "$bench" -n "$n" -problem "$problem" \
        -periodic "$periodic" -methods "$methods" ${BENCH_ARGS:-}
      echo
    done
  done
done
