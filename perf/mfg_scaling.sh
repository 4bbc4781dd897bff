#!/usr/bin/env bash
# End-to-end timings of the MFG solver (perf/bench_mfg, Release build): the 1D 51 x 51 game
# converged, the 1D game with 10^4 points and 10^3 time steps, the 2D game on 256 x 256
# points with 100 time steps, and strong scaling from 1 to 2 ranks. Each line printed by
# bench_mfg gives the outer iterations, the set-up, the solve time and the time per outer
# iteration (figures in docs/performance.md).
#
#   perf/mfg_scaling.sh                        # Release build in build-mfg-rel, everything
#   perf/mfg_scaling.sh build-rel small        # only the 51 x 51 game
#
# Arguments: build directory (default build-mfg-rel); which cases (default "small large 2d
# scaling newton two_grid"). The case newton measures Newton's method (iteration.method newton)
# against the damped fixed point, alternately in one process (bench_mfg -method both), with
# the machine's load average before and after. The case two_grid runs the 10^4 x 10^3 game
# by the fixed point, the two-grid iteration at its defaults (500 coarse points, 4 coarse
# levels), from the cold start (coarse_levels 0: 128 coarse points) and with 4 coarse levels
# and 512 coarse points given, one after the other, ROUNDS times (default 3). Extra bench_mfg options go in BENCH_ARGS (e.g. BENCH_ARGS="-anderson 3").
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build-mfg-rel}"
cases="${2:-small large 2d scaling newton two_grid}"
[[ "$build" = /* ]] || build="$here/$build"
bench="$build/perf/bench_mfg"
if [[ ! -x "$bench" ]]; then
  echo "mfg_scaling.sh: $bench not found; build it with" >&2
  echo "  cmake -S $here -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build --target bench_mfg" >&2
  exit 1
fi

mpiexec_flags=()
if mpiexec --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
  mpiexec_flags+=(--oversubscribe)
  [[ "$(id -u)" = 0 ]] && mpiexec_flags+=(--allow-run-as-root)
fi

run() {
  local np="$1"
  shift
  echo "\$ mpiexec -n $np bench_mfg $* ${BENCH_ARGS:-}"
  # shellcheck disable=SC2086
  mpiexec "${mpiexec_flags[@]}" -n "$np" "$bench" "$@" ${BENCH_ARGS:-}
  echo
}

for c in $cases; do
  case "$c" in
    small)
      # The 51 x 51 game to tolerance 1e-8, 20 repetitions (minimum and median).
      run 1 -problem crowd1d -points 51 -steps 51 -tol 1e-8 -reps 20
      ;;
    large)
      # The deck's default damping 0.5, and 0.55 (fewer iterations; 0.6 needs ~3x more).
      run 1 -problem crowd1d -points 10000 -steps 1000 -tol 1e-6
      run 1 -problem crowd1d -points 10000 -steps 1000 -tol 1e-6 -damping 0.55
      ;;
    2d)
      # Grid sequencing with two coarse levels (as inputs/crowd_2d.yaml), then the cold start.
      run 2 -problem crowd2d -points 256 -steps 100 -tol 1e-5 -damping 0.3 -anderson 3 -coarse_levels 2
      run 2 -problem crowd2d -points 256 -steps 100 -tol 1e-5 -damping 0.3 -anderson 3
      ;;
    scaling)
      # Strong scaling, the same problems on 1 and 2 ranks (a fixed number of iterations).
      for np in 1 2; do
        run "$np" -problem crowd1d -points 10000 -steps 1000 -tol 1e-30 -max_it 5
      done
      for np in 1 2; do
        run "$np" -problem crowd2d -points 256 -steps 100 -tol 1e-30 -damping 0.3 -max_it 3
      done
      ;;
    newton)
      # Newton's method and the fixed point at the deck defaults, alternately, 3 reps each
      # (minimum and median); in 2D a fixed number of iterations (the time per iteration).
      echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
      run 1 -problem crowd1d -points 10000 -steps 1000 -tol 1e-6 -method both -reps 3
      run 2 -problem crowd2d -points 256 -steps 100 -tol 1e-30 -damping 0.3 -max_it 2 -method both
      echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
      ;;
    two_grid)
      game=(-problem crowd1d -points 10000 -steps 1000 -tol 1e-6)
      for ((r = 1; r <= ${ROUNDS:-3}; ++r)); do
        echo "round $r, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
        run 1 "${game[@]}"
        run 1 "${game[@]}" -method two_grid
        run 1 "${game[@]}" -method two_grid -coarse_levels 0
        run 1 "${game[@]}" -method two_grid -coarse_levels 4 -coarse_points 512
      done
      ;;
    *)
      echo "mfg_scaling.sh: unknown case '$c' (small, large, 2d, scaling, newton, two_grid)" >&2
      exit 2
      ;;
  esac
done
