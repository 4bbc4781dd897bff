#!/usr/bin/env bash
# Fractional PDE figures (Release build): the history and Riesz micro-benchmarks of
# perf/bench_fpde, and strong scaling of `fracmfg run` on 1 and 2 ranks.
#
#   perf/fpde_benchmark.sh                       # everything, build in build-fpde-rel
#   perf/fpde_benchmark.sh build-rel history     # one part: history | riesz | scaling
#
# Build first:
#   cmake -S . -B build-fpde-rel -DCMAKE_BUILD_TYPE=Release -DFRACMFG_BUILD_TESTS=OFF
#   cmake --build build-fpde-rel --target bench_fpde fracmfg_driver
#
# history: L1 history on 10^4 points, direct at N_t = 10^3, 3x10^3, 10^4 (10^5 levels would
#          hold 8 GB and take ~100x the 10^4 time), SOE at N_t = 10^3, 10^4, 10^5.
# riesz:   one product with the FFT shell and with the assembled dense matrix, N = 2^10..2^14,
#          and one Crank-Nicolson step (CG + Strang circulant), on 1 and 2 ranks.
# scaling: wall time of the driver on larger versions of the example decks, 1 and 2 ranks
#          (time-fractional 1D with 10^5 points, 2D 257^2 points, Riesz 1D 2^14 points); the
#          decks are written to the work directory (default: a temporary one).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build-fpde-rel}"
part="${2:-all}"
ranks="${RANKS:-1 2}"
[[ "$build" = /* ]] || build="$here/$build"
bench="$build/perf/bench_fpde"
driver="$build/bin/fracmfg"
for exe in "$bench" "$driver"; do
  if [[ ! -x "$exe" ]]; then
    echo "fpde_benchmark.sh: $exe not found; build it with" >&2
    echo "  cmake -S $here -B $build -DCMAKE_BUILD_TYPE=Release -DFRACMFG_BUILD_TESTS=OFF" >&2
    echo "  cmake --build $build --target bench_fpde fracmfg_driver" >&2
    exit 1
  fi
done

mpiexec_flags=()
if mpiexec --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
  mpiexec_flags+=(--oversubscribe)
  [[ "$(id -u)" = 0 ]] && mpiexec_flags+=(--allow-run-as-root)
fi
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), load average: $(cut -d' ' -f1-3 /proc/loadavg)"

if [[ "$part" = all || "$part" = history ]]; then
  echo "## L1 history, 10^4 points"
  "$bench" --benchmark_filter=History --benchmark_color=false
fi

if [[ "$part" = all || "$part" = riesz ]]; then
  for np in $ranks; do
    echo "## Riesz operator, $np rank(s)"
    mpiexec "${mpiexec_flags[@]}" -n "$np" "$bench" --benchmark_filter=Riesz --benchmark_color=false
  done
fi

if [[ "$part" = all || "$part" = scaling ]]; then
  work="${WORK:-$(mktemp -d)}"
  mkdir -p "$work"
  sed -e 's/points: \[400\]/points: [100000]/' -e 's/steps: 400,/steps: 200,/' \
      -e 's/every: 20, checkpoint_every: 100/every: 1000/' \
      "$here/inputs/fpde_subdiffusion_1d.yaml" > "$work/time_1d.yaml"
  sed -e 's/points: \[129, 129\]/points: [257, 257]/' -e 's/steps: 200,/steps: 50,/' \
      -e 's/every: 10, checkpoint_every: 50/every: 1000/' \
      "$here/inputs/fpde_subdiffusion_2d.yaml" > "$work/time_2d.yaml"
  sed -e 's/points: \[4097\]/points: [16385]/' -e 's/steps: 200}/steps: 100}/' \
      -e 's/every: 20}/every: 1000}/' \
      "$here/inputs/fpde_riesz_1d.yaml" > "$work/riesz_1d.yaml"
  for deck in time_1d time_2d riesz_1d; do
    for np in $ranks; do
      start=$(date +%s.%N)
      (cd "$work" && mpiexec "${mpiexec_flags[@]}" -n "$np" "$driver" run "$deck.yaml" \
         -- -fpde_ksp_rtol 1e-10 2>&1 | grep "fpde: steps" | sed 's/^.*\] //')
      end=$(date +%s.%N)
      awk -v d="$deck" -v n="$np" -v a="$start" -v b="$end" 'BEGIN { printf "%s ranks %s: wall %.2f s\n", d, n, b - a }'
    done
  done
fi
