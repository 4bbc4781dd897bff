#!/usr/bin/env bash
# The crowd games at the deck's defaults (iteration.method auto: the fixed point from the
# coarse levels) in two builds of bench_mfg, alternated round by round (which goes first
# alternates too): the fine iterations, their damping and the solve's wall seconds, with the
# machine's load before each run. For the damping that the coarse levels' spectrum sets
# (docs/performance.md, "The damping from the coarse levels' spectrum"):
#
#   git worktree add /tmp/base <commit> && cmake -S /tmp/base -B /tmp/basebuild \
#     -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/basebuild --target bench_mfg
#   perf/mfg_auto_spectrum.sh /tmp/basebuild build 3              # 3 rounds (default 2)
#   CASES="2d_256" perf/mfg_auto_spectrum.sh /tmp/basebuild build 2
#
# Cases (2 ranks each): 2d_128 (128^2 x 50), 2d_256 (256^2 x 100), 3d_32 (32^3 x 25),
# 3d_64 (64^3 x 50), all to tolerance 1e-5. Prints one line per run.
set -euo pipefail

base="${1:?usage: mfg_auto_spectrum.sh BASE_BUILD NEW_BUILD [ROUNDS]}"
new="${2:?usage: mfg_auto_spectrum.sh BASE_BUILD NEW_BUILD [ROUNDS]}"
rounds="${3:-2}"
for b in "$base" "$new"; do
  [[ -x "$b/perf/bench_mfg" ]] || { echo "mfg_auto_spectrum.sh: $b/perf/bench_mfg not found" >&2; exit 1; }
done

mpiexec_flags=()
if mpiexec --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
  mpiexec_flags+=(--oversubscribe)
  [[ "$(id -u)" = 0 ]] && mpiexec_flags+=(--allow-run-as-root)
fi

read -r -a cases <<<"${CASES:-2d_128 2d_256 3d_32}"

args_of() {
  case "$1" in
    2d_128) echo "-problem crowd2d -points 128 -steps 50" ;;
    2d_256) echo "-problem crowd2d -points 256 -steps 100" ;;
    3d_32) echo "-problem crowd3d -points 32 -steps 25" ;;
    3d_64) echo "-problem crowd3d -points 64 -steps 50" ;;
    *) echo "mfg_auto_spectrum.sh: unknown case $1" >&2; exit 1 ;;
  esac
}

run() {
  local label="$1" build="$2" case="$3" out load
  load="$(cut -d' ' -f1 /proc/loadavg)"
  # shellcheck disable=SC2046
  out="$(FRACMFG_LOG_LEVEL=info mpiexec "${mpiexec_flags[@]}" -n 2 "$build/perf/bench_mfg" \
    $(args_of "$case") -tol 1e-5 -method auto -max_it 400 2>&1)"
  local its damping solve
  its="$(grep -o 'converged after [0-9]* iterations' <<<"$out" | tail -1 | grep -o '[0-9]*')"
  damping="$(grep -o 'damping [0-9.]*, Newton' <<<"$out" | tail -1 | grep -o '[0-9.]*')"
  solve="$(grep -o 'solve [0-9.]* s' <<<"$out" | head -1 | grep -o '[0-9.]*')"
  printf '%-6s %-7s fine iterations %3s at damping %-6s solve %8s s  (load %s)\n' \
    "$label" "$case" "${its:-?}" "${damping:-?}" "${solve:-?}" "$load"
}

for ((r = 1; r <= rounds; ++r)); do
  for c in "${cases[@]}"; do
    if ((r % 2)); then
      run base "$base" "$c"
      run new "$new" "$c"
    else
      run new "$new" "$c"
      run base "$base" "$c"
    fi
  done
done
