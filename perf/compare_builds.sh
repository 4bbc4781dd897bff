#!/usr/bin/env bash
# Side-by-side end-to-end timings of two builds (e.g. the previous commit and this one):
# every case runs once per round in each build, the two alternating (which goes first
# alternates too), and the table gives min / median seconds per build and the ratio of the
# medians (new / base). Release builds with the driver and bench_mfg:
#
#   git worktree add ../base <commit> && (cd ../base && scripts/build)
#   perf/compare_builds.sh ../base/build build 5          # 5 rounds (default 3)
#   CASES="crowd_1d fpde_riesz_1d" perf/compare_builds.sh ../base/build build 5
#
# Cases: `fracmfg run` on the example decks (inputs/*.yaml, full size: set-up, solve and
# output), 1 rank unless the name ends in @2; and three bench_mfg solves (1D 51 x 51 x 20
# repetitions, 1D 2000 x 200, 2D 96^2 x 40 on 2 ranks) timed by bench_mfg itself. The
# machine's load is printed before and after; on a shared machine compare the ratios, not
# the seconds.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${1:?usage: compare_builds.sh BASE_BUILD NEW_BUILD [ROUNDS]}"
new="${2:?usage: compare_builds.sh BASE_BUILD NEW_BUILD [ROUNDS]}"
rounds="${3:-3}"
for b in "$base" "$new"; do
  for exe in "$b/bin/fracmfg" "$b/perf/bench_mfg"; do
    [[ -x "$exe" ]] || { echo "compare_builds.sh: $exe not found (build both first)" >&2; exit 1; }
  done
done
base="$(cd "$base" && pwd)"
new="$(cd "$new" && pwd)"

mpiexec_flags=()
if mpiexec --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
  mpiexec_flags+=(--oversubscribe)
  [[ "$(id -u)" = 0 ]] && mpiexec_flags+=(--allow-run-as-root)
fi

default_cases="crowd_1d crowd_2d-ci@2 demo lq_1d fode_nonlinear fode_relaxation fode_rotation \
fpde_riesz_1d fpde_subdiffusion_1d fpde_subdiffusion_2d@2 bench:mfg1d_51 bench:mfg1d_2000 \
bench:mfg2d_96@2"
read -r -a cases <<<"${CASES:-$default_cases}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
results="$work/times.txt"
: >"$results"

# One timed run: prints seconds (wall of the whole command, or bench_mfg's median solve).
run_case() {
  local build="$1" case="$2" ranks=1 name="$2"
  if [[ "$name" == *@* ]]; then ranks="${name##*@}"; name="${name%@*}"; fi
  local launcher=(mpiexec "${mpiexec_flags[@]}" -n "$ranks")
  local dir="$work/run"
  rm -rf "$dir" && mkdir -p "$dir"
  if [[ "$name" == bench:* ]]; then
    local args
    case "${name#bench:}" in
      mfg1d_51) args=(-problem crowd1d -points 51 -steps 51 -tol 1e-8 -reps 20) ;;
      mfg1d_2000) args=(-problem crowd1d -points 2000 -steps 200 -tol 1e-6 -reps 3) ;;
      mfg2d_96) args=(-problem crowd2d -points 96 -steps 40 -tol 1e-5 -damping 0.3 -anderson 3 -reps 1) ;;
      *) echo "compare_builds.sh: unknown case $name" >&2; exit 1 ;;
    esac
    # bench_mfg prints "set-up A s (median B), solve C s (median D), ..."; take D.
    (cd "$dir" && "${launcher[@]}" "$build/perf/bench_mfg" "${args[@]}" 2>&1) |
      sed -n 's/.*, solve [0-9.e+-]* s (median \([0-9.e+-]*\)).*/\1/p' | head -n 1
  else
    local start end
    start=$(date +%s.%N)
    (cd "$dir" && "${launcher[@]}" "$build/bin/fracmfg" run "$here/inputs/$name.yaml" >log 2>&1) || {
      echo "compare_builds.sh: $case failed in $build (see below)" >&2; cat "$dir/log" >&2; exit 1; }
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.4f}')"
  fi
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); rounds: $rounds"
echo "base: $base"
echo "new:  $new"
for ((r = 0; r < rounds; ++r)); do
  for c in "${cases[@]}"; do
    if ((r % 2 == 0)); then order=("base:$base" "new:$new"); else order=("new:$new" "base:$base"); fi
    for entry in "${order[@]}"; do
      t=$(run_case "${entry#*:}" "$c")
      echo "$c ${entry%%:*} $t" >>"$results"
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import statistics, sys
t = {}
for line in open(sys.argv[1]):
    case, which, sec = line.split()
    t.setdefault(case, {}).setdefault(which, []).append(float(sec))
print(f"| case | base min / median (s) | new min / median (s) | new / base (median) |")
print("|---|---|---|---|")
for case, d in t.items():
    b, n = d["base"], d["new"]
    mb, mn = statistics.median(b), statistics.median(n)
    print(f"| {case} | {min(b):.4g} / {mb:.4g} | {min(n):.4g} / {mn:.4g} | {mn / mb:.3f} |")
PY
