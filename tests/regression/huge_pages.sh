#!/usr/bin/env bash
# huge_pages.sh FRACMFG MPIRUN...
# The fracmfg command asks for transparent huge pages by re-executing itself with
# GLIBC_TUNABLES=glibc.malloc.hugetlb=1 where that takes effect (kernel mode [madvise],
# glibc 2.35 or later), and says so in `fracmfg info` on every rank count; the user's own
# tunable and FRACMFG_HUGE_PAGES=0 are honoured. A deck runs the same through the
# re-execution (its arguments after -- reach PETSc).
set -uo pipefail
fracmfg=$1
shift
mpirun=("$@")
failures=0
check() {  # check WHAT CONDITION...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
says() {  # says TEXT OUTPUT: TEXT occurs in OUTPUT
  grep -qF -- "$1" <<<"$2"
}
unset GLIBC_TUNABLES FRACMFG_HUGE_PAGES FRACMFG_HUGE_PAGES_REEXEC
mode=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || true)
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
newer=$(awk -v v="$glibc" 'BEGIN { split(v, p, "."); print (p[1] * 1000 + p[2] >= 2035) ? 1 : 0 }')
echo "kernel: $mode; glibc $glibc"
case "$mode" in
  *"[madvise]"*) if [[ $newer == 1 ]]; then expect="requested (GLIBC_TUNABLES=glibc.malloc.hugetlb=1)"
                 else expect="not requested: glibc $glibc has no glibc.malloc.hugetlb"; fi ;;
  *"[always]"*) expect="given to every large allocation by the kernel" ;;
  *"[never]"*) expect="not available: transparent huge pages are off in the kernel" ;;
  *) expect="cannot be read" ;;
esac
for np in 1 2; do
  out=$("${mpirun[@]}" "$np" "$fracmfg" info 2>&1)
  echo "$out" | grep "huge pages"
  check "$np rank(s): info says '$expect'" says "huge pages for large allocations: $expect" "$out"
done
out=$(GLIBC_TUNABLES=glibc.malloc.arena_max=4 "${mpirun[@]}" 1 "$fracmfg" info 2>&1)
if [[ $expect == requested* ]]; then
  check "other tunables are kept" says \
    "requested (GLIBC_TUNABLES=glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1)" "$out"
fi
out=$(FRACMFG_HUGE_PAGES=0 "${mpirun[@]}" 1 "$fracmfg" info 2>&1)
check "FRACMFG_HUGE_PAGES=0 is honoured" says "not requested: FRACMFG_HUGE_PAGES=0" "$out"
out=$(GLIBC_TUNABLES=glibc.malloc.hugetlb=0 "${mpirun[@]}" 1 "$fracmfg" info 2>&1)
check "the user's tunable stands" says "as GLIBC_TUNABLES sets (glibc.malloc.hugetlb=0)" "$out"
# A run through the re-execution keeps its arguments: PETSc's -help after --.
deck=$(dirname "$0")/verdict_mfg_uniform.yaml
out=$("${mpirun[@]}" 2 "$fracmfg" run "$deck" -- -help 2>&1)
check "a run's PETSc options survive the re-execution" says "-mfg_hjb_direct" "$out"
out=$("${mpirun[@]}" 2 "$fracmfg" run "$deck" 2>&1)
check "a run converges through the re-execution" says "converged" "$out"
[[ $failures -eq 0 ]]
