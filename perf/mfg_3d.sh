#!/usr/bin/env bash
# The 3D game against its 2D baseline of about the same number of grid points, on 2 ranks
# (perf/bench_mfg, Release build): the crowd game of inputs/crowd_3d.yaml on 64 x 64 x 64 =
# 262144 points with 50 time steps, and the crowd game of inputs/crowd_2d.yaml on 512 x 512 =
# 262144 points with 50 time steps, one after the other in the same run. Each line printed by
# bench_mfg gives the outer iterations, the set-up, the solve time, the time per outer
# iteration and the solve's CPU time (figures in docs/performance.md, "3D games").
#
#   perf/mfg_3d.sh                      # Release build in build, 3 outer iterations each
#   perf/mfg_3d.sh build-rel 5          # 5 outer iterations each
#   perf/mfg_3d.sh build converged      # both games to tolerance 1e-5 (long: minutes each)
#
# Arguments: build directory (default build); the number of outer iterations (a fixed count:
# the same work per iteration in both games, tolerance 1e-30), or "converged". Extra
# bench_mfg options go in BENCH_ARGS (e.g. BENCH_ARGS="-mfg_hjb_sub_pc_factor_levels 2").
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build}"
iterations="${2:-3}"
[[ "$build" = /* ]] || build="$here/$build"
bench="$build/perf/bench_mfg"
if [[ ! -x "$bench" ]]; then
  echo "mfg_3d.sh: $bench not found; build it with" >&2
  echo "  cmake -S $here -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build --target bench_mfg" >&2
  exit 1
fi

mpiexec_flags=()
if mpiexec --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
  mpiexec_flags+=(--oversubscribe)
  [[ "$(id -u)" = 0 ]] && mpiexec_flags+=(--allow-run-as-root)
fi

if [[ "$iterations" = converged ]]; then
  stop=(-tol 1e-5 -max_it 300)
else
  stop=(-tol 1e-30 -max_it "$iterations")
fi

run() {
  echo "\$ mpiexec -n 2 bench_mfg $* ${BENCH_ARGS:-}"
  # shellcheck disable=SC2086
  mpiexec "${mpiexec_flags[@]}" -n 2 "$bench" "$@" ${BENCH_ARGS:-}
  echo
}

# The same damping as the decks; the solvers' defaults (GMRES, block Jacobi: ILU(1) blocks in
# 3D, ILU(3) in 2D).
run -problem crowd3d -points 64 -steps 50 -damping 0.3 "${stop[@]}"
run -problem crowd2d -points 512 -steps 50 -damping 0.3 "${stop[@]}"
