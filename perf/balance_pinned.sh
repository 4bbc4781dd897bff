#!/usr/bin/env bash
# The grid load balance (execution.balance.grid) on ranks of unequal speed: 3 ranks on 2
# cores, ranks 0 and 1 bound to core 0 (each at about half speed) and rank 2 alone on core 1
# (taskset per rank through a wrapper). The same run with PETSc's even split (static) and
# with the balance on (balanced), alternating, ROUNDS each (the order alternates too). Cases
# (--case): fpde1d (default), a 1D time-fractional run (SOE history: the per-point work
# dominates; default 20000 x 12000, whose history stays in the caches: at 200000 points it
# streams from memory and the two cores' shared bandwidth, not their speed, bounds it);
# mfg1d, a 1D crowd game (POINTS x STEPS, default 400000 x 50); mfg2d, the 2D
# crowd game of inputs/crowd_2d.yaml on POINTS^2 x STEPS (default 128^2 x 60). Prints the wall
# time of every run (the whole `fracmfg run`), min / median per variant, the speedup of the
# medians (static / balanced; ideal 4/3: shares 1/4, 1/4, 1/2 instead of 1/3 each) and the
# largest difference of the two variants' fields (tests/regression/compare_fields.py; the
# static run on 2 ranks against 3 gives the round-off scale of this problem), and the load.
#
#   perf/balance_pinned.sh                       # build/, 3 rounds, 20000 points, 12000 steps
#   perf/balance_pinned.sh build 5 300000 800    # BUILD ROUNDS POINTS STEPS
#   perf/balance_pinned.sh --case mfg1d build 3  # the 1D game, 400000 points, 50 steps
#
# Needs `fracmfg` in BUILD/bin, taskset, at least 2 CPUs and /usr/bin/python3 with h5py.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case_name=fpde1d
if [[ "${1:-}" = --case ]]; then
  case_name="${2:?--case needs fpde1d, mfg1d or mfg2d}"
  shift 2
fi
case "$case_name" in
  fpde1d) default_points=20000 default_steps=12000 ;;
  mfg1d) default_points=400000 default_steps=50 ;;
  mfg2d) default_points=128 default_steps=60 ;;
  *) echo "balance_pinned.sh: unknown case $case_name (fpde1d, mfg1d, mfg2d)" >&2; exit 1 ;;
esac
build="${1:-build}"
rounds="${2:-3}"
points="${3:-$default_points}"
steps="${4:-$default_steps}"
[[ "$build" = /* ]] || build="$here/$build"
driver="$build/bin/fracmfg"
[[ -x "$driver" ]] || { echo "balance_pinned.sh: $driver not found (build fracmfg_driver)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "balance_pinned.sh: taskset not found" >&2; exit 1; }
[[ "$(nproc)" -ge 2 ]] || { echo "balance_pinned.sh: needs 2 CPUs" >&2; exit 1; }
python=/usr/bin/python3
"$python" -c "import h5py" 2>/dev/null || { echo "balance_pinned.sh: $python has no h5py" >&2; exit 1; }

mpiexec_flags=(--bind-to none)
if mpiexec --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
  mpiexec_flags+=(--oversubscribe)
  [[ "$(id -u)" = 0 ]] && mpiexec_flags+=(--allow-run-as-root)
fi
mapfile -t cpus < <(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' |
  while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done)
core0="${cpus[0]}"
core1="${cpus[1]}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Ranks 0 and 1 on core0, rank 2 on core1.
cat >"$work/pin.sh" <<EOF
#!/usr/bin/env bash
rank="\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-0}}"
if [[ "\$rank" -lt 2 ]]; then cpu=$core0; else cpu=$core1; fi
exec taskset -c "\$cpu" "\$@"
EOF
chmod +x "$work/pin.sh"

deck() {  # deck NAME GRID(true|false) FILE
  case "$case_name" in
    fpde1d) cat >"$work/$1.yaml" <<EOF
problem: fpde
fpde:
  type: time_fractional
  order: 0.5
  diffusivity: 1.0e-4
  initial: "sin(pi*x)"
  source: "sin(3*x)*cos(t)"
  boundary_value: "0"
  domain: {length: [1.0], boundary: dirichlet}
  grid: {points: [$points]}
  time: {horizon: 1.0, steps: $steps, grading: 1.0}
  history: {method: soe, tolerance: 1.0e-10}
execution:
  balance: {grid: $2, interval: 20, threshold: 0.1, patience: 2}
output: {file: $3, every: $steps}
logging: {level: debug}
EOF
      ;;
    mfg1d) cat >"$work/$1.yaml" <<EOF
problem: mfg
mfg:
  domain: {length: [1.0], boundary: periodic}
  grid: {points: [$points]}
  time: {horizon: 1.0, steps: $steps}
  diffusion: 0.05
  coupling: {type: log, potential: "0.5*cos(2*pi*x)"}
  initial_density: "exp(-(x-0.3)^2/0.005)"
  iteration: {method: fixed_point, damping: 0.5, tolerance: 1.0e-6, max_iterations: 200}
execution:
  balance: {grid: $2, interval: 1, threshold: 0.1, patience: 2}
output: {file: $3, every: $steps}
logging: {level: debug}
EOF
      ;;
    mfg2d) cat >"$work/$1.yaml" <<EOF
problem: mfg
mfg:
  domain: {length: [1.0, 1.0], boundary: reflecting}
  grid: {points: [$points, $points]}
  time: {horizon: 1.0, steps: $steps}
  diffusion: 0.01
  coupling: {type: log, potential: "50*exp(-((x-0.5)^2/0.002 + (y-0.5)^2/0.03))"}
  initial_density: "exp(-((x-0.15)^2 + (y-0.5)^2)/0.01)"
  terminal_cost: "5*(x-0.9)^2"
  iteration: {damping: 0.3, tolerance: 1.0e-5, max_iterations: 300}
execution:
  balance: {grid: $2, interval: 1, threshold: 0.1, patience: 2}
output: {file: $3, every: $steps}
logging: {level: debug}
petsc: {options: "-mfg_hjb_ksp_rtol 1e-10 -mfg_fp_ksp_rtol 1e-12"}
EOF
      ;;
  esac
}
deck static false "$work/static.h5"
deck balanced true "$work/balanced.h5"

echo "balance_pinned.sh: $case_name, $points points, $steps steps, 3 ranks: 0 and 1 on CPU $core0, 2 on CPU $core1"
echo "load before: $(uptime)"
: >"$work/times"
run() {  # run VARIANT ROUND
  local t0 t1
  t0=$(date +%s.%N)
  mpiexec "${mpiexec_flags[@]}" -n 3 "$work/pin.sh" "$driver" run "$work/$1.yaml" >"$work/$1.$2.log" 2>&1
  t1=$(date +%s.%N)
  local s
  s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  printf '%s %d %.2f\n' "$1" "$2" "$s" | tee -a "$work/times"
  grep -h "re-split a\|steps 0\.\.\|converged after" "$work/$1.$2.log" | sed 's/^/    /' || true
  # The balance policy's observations (debug lines): measured imbalance max t / mean t - 1.
  grep -h "rebalance: observation" "$work/$1.$2.log" | awk '
    { n++; v[n] = $(NF - 1); s = s " " $(NF - 1) }
    END { if (n) print "    " n " observations, imbalance:" s }' || true
}
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then run static "$r"; run balanced "$r"; else run balanced "$r"; run static "$r"; fi
done
echo "load after: $(uptime)"

"$python" - "$work/times" <<'EOF'
import statistics, sys
t = {}
rounds = {}
for line in open(sys.argv[1]):
    v, r, s = line.split()
    t.setdefault(v, []).append(float(s))
    rounds.setdefault(int(r), {})[v] = float(s)
ratios = [rounds[r]["static"] / rounds[r]["balanced"] for r in sorted(rounds)]
print("static / balanced per round:", " ".join(f"{x:.3f}" for x in ratios),
      f" (median {statistics.median(ratios):.3f})")
for v in ("static", "balanced"):
    print(f"{v:9s} min {min(t[v]):7.2f} s  median {statistics.median(t[v]):7.2f} s  ({len(t[v])} runs)")
print(f"speedup (static / balanced, medians): {statistics.median(t['static']) / statistics.median(t['balanced']):.3f}"
      f"  (mins: {min(t['static']) / min(t['balanced']):.3f})")
EOF

echo "fields, balanced against static (3 ranks):"
"$python" "$here/tests/regression/compare_fields.py" --rtol 1e-10 "$work/static.h5" "$work/balanced.h5" || true
echo "round-off scale: static on 2 ranks (unpinned) against 3:"
sed "s|$work/static.h5|$work/static2.h5|" "$work/static.yaml" >"$work/static2.yaml"
mpiexec "${mpiexec_flags[@]}" -n 2 "$driver" run "$work/static2.yaml" >"$work/static2.log" 2>&1
"$python" "$here/tests/regression/compare_fields.py" --rtol 1e-10 "$work/static.h5" "$work/static2.h5" || true
