#!/usr/bin/env bash
# End-to-end cost of writing a long fractional ODE at every step: `fracmfg run` on one rank
# of D^0.5 y = -y, y(0) = 1, on [0, 10] with 2^20 steps, with the default output
# (every: 1, 2^20 + 1 levels) and with every set past the last step (2 levels), run
# alternately ROUNDS times (default 5); prints each wall time and the min and median of
# each, their ratio, and checks the every-step file holds 2^20 + 1 values of y and of t.
#
#   perf/fode_output.sh                   # build dir build
#   perf/fode_output.sh build-rel 9       # another build, 9 rounds
#
# The figures of docs/performance.md ("Output of a long fractional ODE"). Needs Debian's
# /usr/bin/python3 with h5py for the check.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build}"
rounds="${2:-5}"
[[ "$build" = /* ]] || build="$here/$build"
driver="$build/bin/fracmfg"
[[ -x "$driver" ]] || { echo "fode_output.sh: $driver not found (build fracmfg_driver)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
steps=$((1 << 20))
for every in 1 "$steps"; do
  cat >"$work/every$every.yaml" <<YAML
problem: fode
fode:
  order: [0.5]
  rhs: ["-y1"]
  initial: [1.0]
  horizon: 10.0
  steps: $steps
output: {file: $work/every$every.h5, every: $every}
YAML
done
declare -A times
for ((r = 1; r <= rounds; ++r)); do
  for every in 1 "$steps"; do
    start=$(date +%s%N)
    "$driver" run "$work/every$every.yaml" >"$work/run.log" 2>&1 ||
      { cat "$work/run.log"; exit 1; }
    ms=$((($(date +%s%N) - start) / 1000000))
    times[$every]+="$ms "
    printf 'round %d every %-8s %d ms\n' "$r" "$every" "$ms"
  done
done
/usr/bin/python3 - "${times[1]}" "${times[$steps]}" "$work/every1.h5" "$steps" <<'PY'
import statistics, sys
import h5py
every1 = [float(x) / 1000 for x in sys.argv[1].split()]
last = [float(x) / 1000 for x in sys.argv[2].split()]
steps = int(sys.argv[4])
for name, t in (("every: 1", every1), ("every: 2^20", last)):
    print(f"{name:12s} min {min(t):.3f} s  median {statistics.median(t):.3f} s")
print(f"ratio (median) {statistics.median(every1) / statistics.median(last):.2f}, "
      f"(min) {min(every1) / min(last):.2f}")
with h5py.File(sys.argv[3], "r") as f:
    y = f["fields/y/values"]
    t = f["fields/y/time"]
    print(f"file: y {y.shape}, t {t.shape}, chunks {y.chunks}, last t {t[-1]}")
    assert y.shape == (steps + 1, 1) and t.shape == (steps + 1,), "not every step was written"
PY
