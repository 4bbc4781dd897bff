#!/usr/bin/env bash
# The 2D MFG linear solves with the line preconditioner (fracmfg_line, la/line_pc.hpp)
# against the default block Jacobi/ILU(3), on the crowd game of inputs/crowd_2d.yaml:
# bench_mfg solves the game to the tolerance once per round with each preconditioner, the
# two alternating (which goes first alternates too); the table gives min / median solve
# seconds, the outer iterations and the ratio of the medians (line / ILU). A last run of
# each with -mfg_{hjb,fp}_ksp_converged_reason counts the Krylov iterations per HJB and
# Fokker-Planck solve (not timed; the whole solve, or the first KRYLOV_MAX_IT outer
# iterations when that is set). The machine's load is printed before and
# after; on a shared machine compare the ratio, not the seconds.
#
#   cmake --build build --target bench_mfg
#   perf/line_pc_compare.sh build 5                 # 5 rounds (default 3), 2 ranks
#   RANKS=1 ARGS="-points 96 -steps 40" perf/line_pc_compare.sh build 3
#   KRYLOV_MAX_IT=5 perf/line_pc_compare.sh build 2   # Krylov counts over 5 iterations
set -euo pipefail

build="${1:?usage: line_pc_compare.sh BUILD [ROUNDS]}"
rounds="${2:-3}"
ranks="${RANKS:-2}"
bench="$build/perf/bench_mfg"
[[ -x "$bench" ]] || { echo "line_pc_compare.sh: $bench not found (build bench_mfg)" >&2; exit 1; }
read -r -a args <<<"${ARGS:--points 128 -steps 50 -tol 1e-5 -damping 0.3 -anderson 3}"
line=(-mfg_hjb_pc_type fracmfg_line -mfg_fp_pc_type fracmfg_line)

mpiexec_flags=()
if mpiexec --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
  mpiexec_flags+=(--oversubscribe)
  [[ "$(id -u)" == 0 ]] && mpiexec_flags+=(--allow-run-as-root)
fi
run() { mpiexec "${mpiexec_flags[@]}" -n "$ranks" "$bench" -problem crowd2d "${args[@]}" "$@"; }

# "seconds iterations" of one timed solve.
timed() {
  run "$@" 2>&1 | awk '/converged after|NOT converged/ {
      for (i = 1; i <= NF; ++i) if ($i == "after") it = $(i + 1) }
    /solve [0-9.]+ s/ { for (i = 1; i <= NF; ++i) if ($i == "solve") { print $(i + 1), it; exit } }'
}

stats() {  # min median of the numbers on stdin
  sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                       printf "%.2f %.2f", v[1], m }'
}

echo "load before: $(cat /proc/loadavg)"
echo "bench_mfg -problem crowd2d ${args[*]} on $ranks rank(s), $rounds round(s)"
: >"${TMPDIR:-/tmp}/line_pc_ilu.$$"
: >"${TMPDIR:-/tmp}/line_pc_line.$$"
for ((r = 0; r < rounds; ++r)); do
  if ((r % 2 == 0)); then order=(ilu line); else order=(line ilu); fi
  for which in "${order[@]}"; do
    if [[ "$which" == ilu ]]; then out=$(timed); else out=$(timed "${line[@]}"); fi
    echo "  round $((r + 1)) $which: $out s / iterations (load $(cut -d' ' -f1 /proc/loadavg))"
    echo "$out" >>"${TMPDIR:-/tmp}/line_pc_$which.$$"
  done
done

krylov_limit=()
[[ -n "${KRYLOV_MAX_IT:-}" ]] && krylov_limit=(-tol 1e-30 -max_it "$KRYLOV_MAX_IT")
krylov() {
  run "${krylov_limit[@]}" -mfg_hjb_ksp_converged_reason -mfg_fp_ksp_converged_reason "$@" 2>&1 | awk '
    /Linear mfg_hjb_ solve/ { h++; hi += $NF } /Linear mfg_fp_ solve/ { f++; fi += $NF }
    END { printf "%.1f per HJB solve (%d solves), %.1f per Fokker-Planck solve (%d solves)",
                 h ? hi / h : 0, h, f ? fi / f : 0, f }'
}

printf '\n| preconditioner | solve min / median [s] | outer iterations | Krylov iterations |\n'
printf '|---|---|---|---|\n'
for which in ilu line; do
  f="${TMPDIR:-/tmp}/line_pc_$which.$$"
  s=$(cut -d' ' -f1 "$f" | stats)
  its=$(cut -d' ' -f2 "$f" | sort -u | paste -sd/ -)
  if [[ "$which" == ilu ]]; then k=$(krylov); name="block Jacobi/ILU(3) (default)"; else
    k=$(krylov "${line[@]}"); name="fracmfg_line"; fi
  printf '| %s | %s / %s | %s | %s |\n' "$name" ${s} "$its" "$k"
done
ilu_med=$(cut -d' ' -f1 "${TMPDIR:-/tmp}/line_pc_ilu.$$" | stats | cut -d' ' -f2)
line_med=$(cut -d' ' -f1 "${TMPDIR:-/tmp}/line_pc_line.$$" | stats | cut -d' ' -f2)
echo
echo "median ratio line / ILU: $(awk -v a="$line_med" -v b="$ilu_med" 'BEGIN { printf "%.2f", a / b }')"
echo "load after: $(cat /proc/loadavg)"
rm -f "${TMPDIR:-/tmp}/line_pc_ilu.$$" "${TMPDIR:-/tmp}/line_pc_line.$$"
