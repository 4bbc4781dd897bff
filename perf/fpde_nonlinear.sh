#!/usr/bin/env bash
# Nonlinear fractional PDE figure (Release build): time-fractional Allen-Cahn
# D_t^a u = eps^2 Laplace u + u - u^3 on a periodic 512^2 grid, 100 L1 steps, Newton (SNES)
# per step with the given df/du, CG + BoomerAMG inside, on RANKS ranks (default 2). Prints
# the load average before the run, the wall time of `fracmfg run`, the solver's own time
# for the steps and the Newton and linear iterations per step.
#
#   perf/fpde_nonlinear.sh                 # build in build/, 2 ranks
#   RANKS=1 perf/fpde_nonlinear.sh build   # one rank
#
# The deck is written to the work directory (WORK, default: a temporary one).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build}"
ranks="${RANKS:-2}"
[[ "$build" = /* ]] || build="$here/$build"
driver="$build/bin/fracmfg"
if [[ ! -x "$driver" ]]; then
  echo "fpde_nonlinear.sh: $driver not found; build it with scripts/build" >&2
  exit 1
fi
mpiexec_flags=()
if mpiexec --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
  mpiexec_flags+=(--oversubscribe)
  [[ "$(id -u)" = 0 ]] && mpiexec_flags+=(--allow-run-as-root)
fi
work="${WORK:-$(mktemp -d)}"
mkdir -p "$work"
steps=100
cat >"$work/allen_cahn_512.yaml" <<DECK
problem: fpde
fpde:
  type: time_fractional
  order: 0.5
  diffusivity: 1.0e-4                  # eps^2, eps = 0.01
  initial: "0.2*sin(12*pi*x)*cos(10*pi*y) + 0.1*cos(4*pi*(x+y))"
  source: "u - u^3"
  source_derivative: "1 - 3*u^2"
  domain: {length: [1.0, 1.0], boundary: periodic}
  grid: {points: [512, 512]}
  time: {horizon: 2.0, steps: $steps}
  history: {method: soe}
execution: {backend: cpu, learn: false}
output: {file: allen_cahn_512.h5, every: $steps}
DECK
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
start=$(date +%s.%N)
(cd "$work" && mpiexec "${mpiexec_flags[@]}" -n "$ranks" "$driver" run allen_cahn_512.yaml) \
  >"$work/run.log" 2>&1 || { cat "$work/run.log"; exit 1; }
end=$(date +%s.%N)
summary=$(grep "fpde: steps" "$work/run.log" | tail -1)
echo "$summary"
/usr/bin/env python3 - "$summary" "$start" "$end" "$ranks" "$steps" <<'PY'
import re, sys
line, start, end, ranks, steps = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], int(sys.argv[5])
solver = float(re.search(r"in ([0-9.e+-]+) s", line).group(1))
linear = int(re.search(r"(\d+) linear iterations", line).group(1))
newton = int(re.search(r"(\d+) Newton iterations", line).group(1))
print(f"Allen-Cahn 512^2 x {steps} steps, {ranks} ranks: wall {end - start:.2f} s, steps "
      f"{solver:.2f} s, {newton / steps:.2f} Newton iterations per step, "
      f"{linear / max(newton, 1):.1f} CG iterations per Newton iteration")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
