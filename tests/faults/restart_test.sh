#!/bin/bash
# Stop and resume through the driver: `fracmfg run` under mpiexec, a SIGUSR1 to mpiexec
# (which Open MPI forwards to the ranks), FRACMFG_RESTART, and the errors of a bad restart.
# One case per call; tests/faults/CMakeLists.txt registers them.
#
#   restart_test.sh CASE
#
# Environment: see tests/faults/common.sh.
#
# Cases:
#   signal_resume       mfg deck on 2 ranks, SIGUSR1 after the first outer iteration: exit 75
#                       and a checkpoint; resumed with FRACMFG_RESTART on 3 ranks: the results
#                       of an uninterrupted run, value by value (round-off)
#   missing_checkpoint  FRACMFG_RESTART naming no file: exit 5, one line, before any solving
#   wrong_checkpoint    FRACMFG_RESTART naming an output file (not a checkpoint): exit 5;
#                       an mfg checkpoint for an fpde deck: exit 2; for an mfg deck with
#                       another grid: exit 5
#   two_checkpoints     FRACMFG_RESTART and -mfg_restart naming different files: exit 2
#                       naming both; the same file given both ways is accepted
#   fode_refuses        FRACMFG_RESTART with a fode deck: exit 2, "cannot resume"
# Exit 0: passed, anything else: failed.
set -uo pipefail

case_name=${1:?usage: restart_test.sh CASE}
tool=restart_test
# shellcheck source=tests/faults/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

rm -rf "$work" && mkdir -p "$work" && cd "$work" || fail "cannot create $work"

# An mfg game from the -ci decks whose run takes a second or more: the crowd, 10 x the time
# steps, a tight tolerance; a checkpoint file of its own.
mfg_deck() {
  "$python" "$deck_tool" scale "$top/inputs/crowd_1d-ci.yaml" "$work/tmp.yaml" "${2:-10}" &&
    "$python" "$deck_tool" set "$work/tmp.yaml" "$1" output.file=results/crowd.h5 \
      output.checkpoint_file=results/crowd.chk.h5 mfg.iteration.tolerance=1.0e-7 \
      mfg.iteration.max_iterations=200 || fail "cannot write the deck $1"
}

case_signal_resume() {
  mfg_deck "$work/crowd.yaml" 20
  # The uninterrupted run (reference, and a measure of how long the run takes).
  mkdir -p whole
  local start=$SECONDS
  (cd whole && "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/crowd.yaml") >whole.log 2>&1
  expect whole.log $? 0 "mfg: converged after"
  note "uninterrupted run: $((SECONDS - start)) s, $(grep -o 'converged after [0-9]* iterations' whole.log)"
  # Interrupted: SIGUSR1 to mpiexec once the first outer iteration is logged.
  mkdir -p stopped
  (cd stopped && exec "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/crowd.yaml") >stopped.log 2>&1 &
  local pid=$! i status
  for ((i = 0; i < 600; ++i)); do
    grep -q "mfg iteration 1:" stopped.log && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  grep -q "mfg iteration 1:" stopped.log || { show stopped.log; fail "no first iteration within 30 s"; }
  kill -USR1 "$pid" || fail "mpiexec ended before the signal: the deck is too short"
  note "SIGUSR1 to mpiexec (pid $pid)"
  for ((i = 0; i < 400; ++i)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    show stopped.log
    fail "still running 20 s after SIGUSR1"
  fi
  wait "$pid"
  status=$?
  expect stopped.log $status 75 "mfg: stopped by a signal after iteration" \
    "checkpoint written to results/crowd.chk.h5"
  [[ -f stopped/results/crowd.chk.h5 ]] || fail "no checkpoint stopped/results/crowd.chk.h5"
  [[ ! -f stopped/results/crowd.h5 ]] || fail "a stopped mfg run wrote its results file"
  local stopped_at
  stopped_at=$(sed -n 's/.*stopped by a signal after iteration \([0-9]*\).*/\1/p' stopped.log | head -n 1)
  note "stopped after iteration $stopped_at"
  # Resumed on 3 ranks from FRACMFG_RESTART: the solver names the checkpoint, carries on
  # from the next iteration and ends with the uninterrupted results.
  local ckpt=$work/stopped/results/crowd.chk.h5
  # 3 ranks on 2 cores: slow on a loaded machine; a bound that still shows the log.
  (cd stopped && FRACMFG_RESTART=$ckpt exec timeout -k 5 240 "${mpiexec[@]}" -n 3 "$fracmfg" \
    run "$work/crowd.yaml") >resumed.log 2>&1
  expect resumed.log $? 0 "mfg: restarted from $ckpt at iteration $stopped_at (written on 2 rank(s))" \
    "mfg iteration $((stopped_at + 1)):" "mfg: converged after"
  grep -q "mfg iteration 1:" resumed.log && fail "the resumed run started from the beginning"
  "$python" "$h5_compare" --rtol 1e-10 --ignore '(^|/)seconds($|@)|@mpi_ranks$' \
    stopped/results/crowd.h5 whole/results/crowd.h5 || fail "the resumed run's results differ"
}

case_missing_checkpoint() {
  mfg_deck "$work/crowd.yaml" 1
  FRACMFG_RESTART=$work/no/such.chk.h5 "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/crowd.yaml" \
    >run.log 2>&1
  expect run.log $? 5 "cannot resume from FRACMFG_RESTART=$work/no/such.chk.h5: no such file"
  one_line_error run.log
  grep -q "mfg iteration" run.log && fail "the run iterated before the error"
  [[ ! -e results/crowd.h5 ]] || fail "a results file was written"
  # An empty FRACMFG_RESTART means no restart.
  FRACMFG_RESTART= "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/crowd.yaml" >empty.log 2>&1
  expect empty.log $? 0 "mfg: converged after"
}

case_wrong_checkpoint() {
  mfg_deck "$work/crowd.yaml" 1
  "$python" "$deck_tool" set "$work/crowd.yaml" "$work/every.yaml" output.checkpoint_every=2 ||
    fail "deck"
  "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/every.yaml" >first.log 2>&1
  expect first.log $? 0 "mfg: converged after"
  [[ -f results/crowd.chk.h5 && -f results/crowd.h5 ]] || fail "no results or checkpoint"
  # A results file is not a checkpoint.
  FRACMFG_RESTART=results/crowd.h5 "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/crowd.yaml" \
    >output.log 2>&1
  expect output.log $? 5 "cannot resume from FRACMFG_RESTART=results/crowd.h5: it is not a fracmfg checkpoint"
  one_line_error output.log
  # An mfg checkpoint for an fpde deck.
  FRACMFG_RESTART=results/crowd.chk.h5 "${mpiexec[@]}" -n 2 "$fracmfg" run \
    "$top/inputs/fpde_subdiffusion_1d-ci.yaml" >fpde.log 2>&1
  expect fpde.log $? 2 "it is a checkpoint of a 'mfg' run, the deck is a 'fpde' problem"
  one_line_error fpde.log
  # An mfg checkpoint of another grid.
  "$python" "$deck_tool" set "$work/crowd.yaml" "$work/finer.yaml" "mfg.grid.points=[64]" || fail "deck"
  FRACMFG_RESTART=results/crowd.chk.h5 "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/finer.yaml" \
    >grid.log 2>&1
  expect grid.log $? 5 "mfg: cannot restart from 'results/crowd.chk.h5': its grid is"
  one_line_error grid.log
  grep -q "mfg iteration" grid.log && fail "the run iterated before the error"
  # A checkpoint holding a NaN (a damaged or edited file) is refused, not resumed into the
  # results.
  cp results/crowd.chk.h5 nan.chk.h5
  "$python" -c "import h5py; f = h5py.File('nan.chk.h5', 'r+'); d = f['fields/m/000003']; v = d[...]; v[7] = float('nan'); d[...] = v" ||
    fail "cannot edit the checkpoint"
  rm -f results/crowd.h5
  FRACMFG_RESTART=nan.chk.h5 "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/crowd.yaml" >nan.log 2>&1
  expect nan.log $? 5 "cannot resume from checkpoint 'nan.chk.h5': field 'm/000003' holds a value that is not finite"
  one_line_error nan.log
  grep -q "mfg iteration" nan.log && fail "the run iterated from a NaN checkpoint"
  [[ ! -e results/crowd.h5 ]] || fail "results were written from a NaN checkpoint"
  true
}

case_two_checkpoints() {
  mfg_deck "$work/crowd.yaml" 1
  "$python" "$deck_tool" set "$work/crowd.yaml" "$work/every.yaml" output.checkpoint_every=1 ||
    fail "deck"
  "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/every.yaml" >first.log 2>&1
  expect first.log $? 0 "mfg: converged after"
  cp results/crowd.chk.h5 other.chk.h5
  FRACMFG_RESTART=results/crowd.chk.h5 "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/crowd.yaml" \
    -- -mfg_restart other.chk.h5 >both.log 2>&1
  expect both.log $? 2 "FRACMFG_RESTART=results/crowd.chk.h5 and -mfg_restart other.chk.h5"
  one_line_error both.log
  # The same file, once absolute and once relative: one source, accepted.
  FRACMFG_RESTART=$work/other.chk.h5 "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/crowd.yaml" \
    -- -mfg_restart ./other.chk.h5 >same.log 2>&1
  expect same.log $? 0 "mfg: restarted from $work/other.chk.h5"
}

case_fode_refuses() {
  FRACMFG_RESTART=$work/any.chk.h5 "${mpiexec[@]}" -n 2 "$fracmfg" run \
    "$top/inputs/fode_relaxation-ci.yaml" >run.log 2>&1
  expect run.log $? 2 "FRACMFG_RESTART=$work/any.chk.h5 is set, but fode runs cannot resume"
  one_line_error run.log
  grep -q "fode: .* steps in" run.log && fail "the fode run ran"
  true
}

case "$case_name" in
  signal_resume | missing_checkpoint | wrong_checkpoint | two_checkpoints | fode_refuses)
    "case_$case_name"
    ;;
  *) fail "unknown case '$case_name'" ;;
esac
echo "PASSED: $case_name"
