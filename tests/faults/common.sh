# Shared set-up of the fault tests (sourced by disk_test.sh and restart_test.sh after they set
# case_name and the name of the script in `tool`): the environment CMake passes, the work
# directory of the case, and the checks on a run's output.
#
# Environment (set by CMake): FRACMFG_SOURCE_DIR, FRACMFG (the driver), FAULTS_TEST_DIR
# (work directory), MPIEXEC (launcher with its flags, taking -n N), PYTHON.
top=${FRACMFG_SOURCE_DIR:?}
fracmfg=${FRACMFG:?}
root=${FAULTS_TEST_DIR:?}
python=${PYTHON:-/usr/bin/python3}
read -r -a mpiexec <<<"${MPIEXEC:?}"
deck_tool=$top/tests/slurm/deck_tool.py
h5_compare=$top/tests/slurm/h5_compare.py
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 PYTHONDONTWRITEBYTECODE=1
unset FRACMFG_RESTART FRACMFG_LOG_LEVEL FRACMFG_LOG_RANKS FRACMFG_SKIP_SPACE_CHECK
work=$root/$case_name

fail() {
  echo "FAILED: $*"
  exit 1
}
note() { echo "$tool: $*"; }
show() {
  echo "---- $1"
  sed 's/^/  | /' "$1"
  echo "----"
}

# expect LOG STATUS WANT TEXT...: the run ended with WANT and its output holds each TEXT.
expect() {
  local log=$1 status=$2 want=$3 text
  shift 3
  ((status == want)) || { show "$log"; fail "exit code $status, expected $want"; }
  for text in "$@"; do
    grep -qF -- "$text" "$log" || { show "$log"; fail "the output lacks: $text"; }
  done
}

# one_line_error LOG: exactly one error line; no HDF5 error stack, PETSc error or abort.
one_line_error() {
  local n
  n=$(grep -c "fracmfg: error" "$1")
  ((n == 1)) || { show "$1"; fail "$n error lines, expected 1"; }
  ! grep -qE "HDF5-DIAG|#[0-9]{3}:|PETSC ERROR|MPI_ABORT|Traceback" "$1" ||
    { show "$1"; fail "an HDF5 error stack, a traceback or an abort"; }
}
