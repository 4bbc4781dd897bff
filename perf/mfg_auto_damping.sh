#!/usr/bin/env bash
# The fixed point's adaptive damping under iteration.method auto on the 1D game with an
# obstacle of tests/mpi/mfg_two_grid_test.cpp (MfgAuto; 100 points x 40 steps, tolerance
# 1e-8) for several coupling strengths s: the outer iterations with the default damping
# 0.5 held fixed, with auto (the halvings from its log), and with 0.25 held fixed. The
# figures of docs/performance.md, "The iteration method auto".
#   perf/mfg_auto_damping.sh [BUILD_DIR] [STRENGTH...]     # defaults: build, 1.6 2 3 5 8
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
shift || true
strengths=("$@")
[[ ${#strengths[@]} -gt 0 ]] || strengths=(1.6 2 3 5 8)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
run() {  # strength, iteration entries
  cat >game.yaml <<DECK
problem: mfg
mfg:
  domain: {length: [1.0], boundary: reflecting, obstacle: "0.02 - (x-0.7)^2"}
  grid: {points: [100]}
  time: {horizon: 1.0, steps: 40}
  diffusion: 0.05
  coupling: {type: log, strength: $1, potential: "0.5*cos(2*pi*x)"}
  initial_density: "exp(-(x-0.3)^2/0.005)"
  iteration: {$2 tolerance: 1.0e-8, max_iterations: 300}
output: {file: game.h5}
DECK
  local log
  log=$(FRACMFG_PROGRESS_SECONDS=1000 "$build/bin/fracmfg" run game.yaml 2>&1 || true)
  local halvings
  halvings=$(grep -o 'mfg iteration [0-9]*: the change has not fallen' <<<"$log" |
    awk '{printf "%s%s", sep, substr($3, 1, length($3) - 1); sep = ","}')
  local result
  result=$(grep -oE '(not )?converged after [0-9]+ iterations' <<<"$log" | tail -1)
  echo "${result:-failed}${halvings:+ (halved at $halvings)}"
}
printf '| s | damping 0.5 fixed | auto | damping 0.25 fixed |\n|---|---|---|---|\n'
for s in "${strengths[@]}"; do
  printf '| %s | %s | %s | %s |\n' "$s" "$(run "$s" "method: fixed_point,")" "$(run "$s" "")" \
    "$(run "$s" "damping: 0.25,")"
done
