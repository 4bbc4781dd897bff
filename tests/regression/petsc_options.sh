#!/usr/bin/env bash
# petsc_options.sh WORKDIR FRACMFG MPIRUN...
# PETSc options that would write, read or start something are refused before PETSc sees
# them, from the deck (file:line:col: petsc.options), after -- on the command line and in
# PETSC_OPTIONS, with exit code 2, one line, and nothing written; options that PETSc reads
# only at start-up are refused in a deck with the advice to give them after --, and work
# there; -log_view in a deck prints PETSc's summary at the end; a Krylov type that does not
# check its result (preonly) with an inexact preconditioner stops the run. All on 2 ranks.
set -uo pipefail
work=$1 fracmfg=$2
shift 2
mpirun=("$@")
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
unset PETSC_OPTIONS
failures=0
check() {  # check WHAT CONDITION...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
# deck NAME OPTIONS: a small fode deck with petsc.options OPTIONS (none when empty).
deck() {
  {
    echo 'problem: fode'
    echo 'fode: {order: 0.8, horizon: 1.0, steps: 10, rhs: ["-y1"], initial: [1.0]}'
    echo "output: {file: out/$1.h5}"
    [[ -n $2 ]] && printf 'petsc:\n  options: "%s"\n' "$2"
  } >"$1.yaml"
}
# refused LOG STATUS TEXT...: exit 2, one error line holding each TEXT, nothing written.
refused() {
  local log=$1 status=$2 t
  shift 2
  cat "$log"
  check "$log: exit code 2 (got $status)" test "$status" -eq 2
  check "$log: one error line" test "$(grep -c 'fracmfg: error' "$log")" -eq 1
  for t in "$@"; do check "$log: says '$t'" grep -qF -- "$t" "$log"; done
  check "$log: no PETSc error" test "$(grep -c 'PETSC ERROR' "$log")" -eq 0
  check "$log: nothing written" test ! -e out -a ! -e mon.txt -a ! -e log.txt
}

# 1. A deck whose monitor would overwrite the deck itself.
deck self '-ksp_monitor :self.yaml'
cp self.yaml self.orig
"${mpirun[@]}" 2 "$fracmfg" run self.yaml >self.log 2>&1
refused self.log $? "self.yaml:5:12: petsc.options: '-ksp_monitor :self.yaml' writes the file 'self.yaml'" \
  "fracmfg writes only the files the deck names"
check "the deck is byte-identical" cmp -s self.yaml self.orig
"${mpirun[@]}" 2 "$fracmfg" validate self.yaml >validate.log 2>&1
refused validate.log $? "petsc.options: '-ksp_monitor :self.yaml'"

# 2. -options_file would escape the check; -malloc_debug has no effect from a deck.
deck optfile '-options_file more.opts'
"${mpirun[@]}" 2 "$fracmfg" run optfile.yaml >optfile.log 2>&1
refused optfile.log $? "'-options_file more.opts' reads options from another file"
deck startup '-malloc_debug'
"${mpirun[@]}" 2 "$fracmfg" run startup.yaml >startup.log 2>&1
refused startup.log $? "'-malloc_debug' is read only while PETSc starts" "fracmfg run DECK -- -malloc_debug"

# 3. The command line after -- and PETSC_OPTIONS: the same rules, before PETSc starts.
deck plain ''
"${mpirun[@]}" 2 "$fracmfg" run plain.yaml -- -log_view ascii:log.txt >cmd.log 2>&1
refused cmd.log $? "fracmfg: error: command line: '-log_view ascii:log.txt' writes the file 'log.txt'"
PETSC_OPTIONS="-history mon.txt" "${mpirun[@]}" 2 "$fracmfg" run plain.yaml >env.log 2>&1
refused env.log $? "fracmfg: error: PETSC_OPTIONS: '-history mon.txt' names a file for PETSc to write"
"${mpirun[@]}" 2 "$fracmfg" run plain.yaml -- -start_in_debugger >dbg.log 2>&1
refused dbg.log $? "'-start_in_debugger' starts a debugger"

# Words PETSc would ignore: a word after the deck, a second value after an option, from the
# command line, PETSC_OPTIONS and the deck.
"${mpirun[@]}" 2 "$fracmfg" run plain.yaml extra >word.log 2>&1
refused word.log $? "fracmfg: error: command line: 'extra' is not a PETSc option"
"${mpirun[@]}" 2 "$fracmfg" run plain.yaml -- -ksp_type gmres cg >word2.log 2>&1
refused word2.log $? "fracmfg: error: command line: 'cg' is not a PETSc option"
PETSC_OPTIONS="ksp_monitor" "${mpirun[@]}" 2 "$fracmfg" run plain.yaml >word3.log 2>&1
refused word3.log $? "fracmfg: error: PETSC_OPTIONS: 'ksp_monitor' is not a PETSc option"
deck word '-ksp_rtol 1e-8 1e-9'
"${mpirun[@]}" 2 "$fracmfg" run word.yaml >word4.log 2>&1
refused word4.log $? "word.yaml:5:12: petsc.options: '1e-9' is not a PETSc option"

# 4. What is allowed: start-up options on the command line, -log_view in the deck.
"${mpirun[@]}" 2 "$fracmfg" run plain.yaml -- -malloc_debug -ksp_converged_reason >ok.log 2>&1
status=$?
check "start-up options after --: exit 0 (got $status)" test "$status" -eq 0
check "and the results written" test -f out/plain.h5
deck logview '-log_view'
"${mpirun[@]}" 2 "$fracmfg" run logview.yaml >logview.log 2>&1
status=$?
check "-log_view in a deck: exit 0 (got $status)" test "$status" -eq 0
check "-log_view in a deck prints PETSc's summary" grep -q "Performance Summary" logview.log
check "-log_view in a deck: no PETSc error" test "$(grep -c 'PETSC ERROR' logview.log)" -eq 0
check "only the named outputs were written" test "$(ls out | sort | tr '\n' ' ')" = \
  "logview.h5 plain.h5 "
rm -rf out

# 5. A Krylov type that does not check its result (preonly) with an inexact preconditioner
#    stops the run with exit code 4 naming the residual (it returned a wrong field with exit
#    0); with an exact one it is a solve. fpde on the command line; mfg's Fokker-Planck step
#    from the deck (preonly also takes no initial guess there).
fpde=$(dirname "$0")/../../inputs/fpde_subdiffusion_1d-ci.yaml
"${mpirun[@]}" 2 "$fracmfg" run "$fpde" -- -fpde_ksp_type preonly -fpde_pc_type jacobi >pre.log 2>&1
status=$?
cat pre.log
check "fpde preonly + jacobi: exit code 4 (got $status)" test "$status" -eq 4
check "fpde preonly + jacobi: one error line naming the residual" test "$(grep -c \
  'fracmfg: error: fpde: step 1: the linear solve (KSP preonly, PC jacobi) stopped without checking its result and left a relative residual' pre.log)" -eq 1
check "fpde preonly + jacobi: the advice" grep -qF -- "use -fpde_ksp_type gmres" pre.log
"${mpirun[@]}" 2 "$fracmfg" run "$fpde" -- -fpde_ksp_type preonly -fpde_pc_type lu >prelu.log 2>&1
status=$?
check "fpde preonly + lu: exit 0 (got $status)" test "$status" -eq 0
{
  echo 'problem: mfg'
  echo 'mfg: {domain: {length: [1.0, 1.0], boundary: reflecting}, grid: {points: [12, 12]},'
  echo '      time: {horizon: 0.5, steps: 4}, diffusion: 0.1, coupling: {type: log},'
  echo '      initial_density: "1"}'
  echo 'output: {file: out/fp.h5}'
  echo 'petsc: {options: "-mfg_fp_ksp_type preonly -mfg_fp_pc_type jacobi"}'
} >fp.yaml
"${mpirun[@]}" 2 "$fracmfg" run fp.yaml >fp.log 2>&1
status=$?
cat fp.log
check "mfg preonly + jacobi: exit code 4 (got $status)" test "$status" -eq 4
check "mfg preonly + jacobi: one line, no PETSc error" test "$(grep -c 'fracmfg: error' fp.log)" -eq 1 -a \
  "$(grep -c 'Fokker-Planck step: the linear solve (KSP preonly, PC jacobi)' fp.log)" -eq 1

[[ $failures -eq 0 ]] && echo "petsc_options: all passed" && exit 0
echo "petsc_options: $failures check(s) failed"
exit 1
