#!/bin/bash
# Runs too large for memory through the driver: `fracmfg run` under mpiexec on 2 ranks. One
# case per call; tests/faults/CMakeLists.txt registers them.
#
#   memory_test.sh CASE
#
# Environment: see tests/faults/common.sh.
#
# Cases:
#   memory_precheck   decks whose arrays do not fit are refused before anything is
#                     allocated, exit 2 with one line giving the estimate and what is
#                     available: mfg, fpde and fode decks within an address-space limit
#                     (ulimit -v) on every rank, and an mfg deck larger than what the node
#                     has available (MemAvailable) with no limit; FRACMFG_SKIP_MEMORY_CHECK=1
#                     lets a run past the check
#   out_of_memory     FRACMFG_SKIP_MEMORY_CHECK=1 and an address-space limit on rank 1 only,
#                     so that rank 1 runs out of memory (in PETSc's malloc) while rank 0 goes
#                     on into the solve's
#                     collective calls: the job ends within seconds (no rank waits for
#                     ever), with one line "error on rank 1: out of memory", a non-zero exit
#                     and no results file
# (tests/mpi/programs/rank_error.cpp has the same for operator new and std::bad_alloc.)
# Exit 0: passed, anything else: failed.
set -uo pipefail

case_name=${1:?usage: memory_test.sh CASE}
tool=memory_test
# shellcheck source=tests/faults/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
unset FRACMFG_SKIP_MEMORY_CHECK
# The output space check is not what these cases test.
export FRACMFG_SKIP_SPACE_CHECK=1

rm -rf "$work" && mkdir -p "$work/results" && cd "$work" || fail "cannot create $work"

# deck IN OUT KEY=VALUE...
deck() {
  local in=$1 out=$2
  shift 2
  "$python" "$deck_tool" set "$in" "$out" "$@" || fail "cannot write the deck $out"
}

# run LOG SECONDS VLIMIT_KIB RANKS -- ARGS...: mpiexec -n 2 fracmfg run ARGS within SECONDS,
# with the address-space limit VLIMIT_KIB (ulimit -v) in the ranks listed in RANKS ("0 1",
# "1"; "" for none); returns the exit code (124: the time ran out).
run() {
  local log=$1 seconds=$2 limit=$3 ranks=$4
  shift 5
  timeout -k 10 "$seconds" "${mpiexec[@]}" -n 2 /bin/bash -c \
    'for r in $1; do [[ $r == "${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}" ]] && ulimit -S -v "$0"; done
     shift; exec "$@"' "${limit:-unlimited}" "$ranks" "$fracmfg" run "$@" >"$log" 2>&1
}

# refused LOG STATUS TEXT...: exit 2 before the solve, one error line holding each TEXT.
refused() {
  local log=$1 status=$2
  shift 2
  expect "$log" "$status" 2 "needs at least" "FRACMFG_SKIP_MEMORY_CHECK=1 skips this check" "$@"
  one_line_error "$log"
  ! grep -qE "mfg iteration|fpde: step|fode: step" "$log" || { show "$log"; fail "the run started"; }
  [[ -z $(ls -A results) ]] || fail "files written: $(ls -A results)"
}

# 4 GiB of address space per rank: room for the libraries, not for the decks below.
vlimit=$((4 * 1024 * 1024))

case_memory_precheck() {
  # mfg: u and m at 101 levels of 2 x 10^6 points per rank, iterate and sweep: 6.5 GB.
  deck "$top/inputs/crowd_2d-ci.yaml" mfg.yaml "mfg.grid.points=[2000, 2000]" \
    mfg.time.steps=100 output.every=100 output.checkpoint_every=0 output.file=results/m.h5
  run mfg.log 120 "$vlimit" "0 1" -- "$work/mfg.yaml"
  refused mfg.log $? "the mfg solve (grid 2000 x 2000, 100 steps)" \
    "of memory on each rank, and this rank's address-space limit (ulimit -v) leaves"
  # fpde with the direct L1 history: every one of 20001 levels of 50000 points per rank.
  deck "$top/inputs/fpde_subdiffusion_1d-ci.yaml" fpde.yaml "fpde.grid.points=[100000]" \
    fpde.time.steps=20000 output.every=20000 output.checkpoint_every=0 output.file=results/f.h5
  run fpde.log 120 "$vlimit" "0 1" -- "$work/fpde.yaml"
  refused fpde.log $? "the fpde solve (grid 100000, 20000 steps)" "address-space limit"
  # fode: the right-hand side of every one of 10^9 steps.
  deck "$top/inputs/fode_relaxation-ci.yaml" fode.yaml fode.steps=1000000000 \
    output.every=1000000000 output.file=results/o.h5
  run fode.log 120 "$vlimit" "0 1" -- "$work/fode.yaml"
  refused fode.log $? "the fode solve (2 component(s), 1000000000 steps)" "address-space limit"
  # No limit but the node's memory: twice what it has available, on 2 ranks of one node.
  local avail steps
  avail=$(awk '/^MemAvailable:/ {print $2 * 1024}' /proc/meminfo)
  [[ -n $avail ]] || fail "no MemAvailable in /proc/meminfo"
  # Per level and rank: u and m of 8 x 10^6 / 2 points, iterate and sweep, 8 bytes each.
  steps=$(((2 * avail) / (2 * 4 * 2 * 4000000 * 8) + 1))
  deck "$top/inputs/crowd_2d-ci.yaml" node.yaml "mfg.grid.points=[4000, 2000]" \
    "mfg.time.steps=$steps" "output.every=$steps" output.checkpoint_every=0 \
    output.file=results/n.h5
  run node.log 120 "" "" -- "$work/node.yaml"
  refused node.log $? "of memory on this node (2 rank(s) of about" "available"
  # The override lets the first deck past the check (it then fails to allocate: exit 1).
  FRACMFG_SKIP_MEMORY_CHECK=1 run skip.log 120 "$vlimit" "0 1" -- "$work/mfg.yaml"
  local status=$?
  ((status != 0 && status != 124)) || { show skip.log; fail "exit code $status"; }
  grep -q "needs at least" skip.log && { show skip.log; fail "the check ran with the override"; }
  grep -q "out of memory" skip.log || { show skip.log; fail "no out-of-memory line"; }
  true
}

case_out_of_memory() {
  export FRACMFG_SKIP_MEMORY_CHECK=1
  # Rank 1 cannot hold its half of the game's levels; rank 0 can.
  deck "$top/inputs/crowd_2d-ci.yaml" oom.yaml "mfg.grid.points=[2000, 2000]" \
    mfg.time.steps=100 output.every=100 output.checkpoint_every=0 output.file=results/m.h5
  local started=$SECONDS status
  run oom.log 100 "$vlimit" "1" -- "$work/oom.yaml"
  status=$?
  ((status != 124)) || { show oom.log; fail "the job did not end within 100 s (a rank waits)"; }
  ((status != 0)) || { show oom.log; fail "exit code 0"; }
  expect oom.log "$status" "$status" "fracmfg: error on rank 1: out of memory:"
  local n
  n=$(grep -c "fracmfg: error" oom.log)
  ((n == 1)) || { show oom.log; fail "$n error lines, expected 1"; }
  ! grep -qE "PETSC ERROR|Traceback|std::bad_alloc'" oom.log ||
    { show oom.log; fail "a PETSc error, a traceback or an uncaught exception"; }
  [[ ! -e results/m.h5 ]] || fail "a results file was written"
  [[ -z $(find results -name '.*.tmp-*') ]] || fail "a temporary file was left"
  note "mfg (PETSc's malloc): ended after $((SECONDS - started)) s, exit code $status"
  true
}

case "$case_name" in
  memory_precheck | out_of_memory) "case_$case_name" ;;
  *) fail "unknown case '$case_name'" ;;
esac
echo "PASSED: $case_name"
