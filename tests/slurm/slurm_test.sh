#!/bin/bash
# The job-script tests on a one-node Slurm cluster started on this machine
# (scripts/local-slurm). One case per call; tests/slurm/CMakeLists.txt registers them.
#
#   slurm_test.sh CASE
#
# Environment (set by CMake): FRACMFG_SOURCE_DIR, FRACMFG (the driver), SLURM_TEST_DIR
# (work directory; the cluster's state is in SLURM_TEST_DIR/cluster), SLURM_TEST_PORT,
# MPIEXEC (launcher with its flags, taking -n N), PYTHON.
#
# Cases: start, probe, cpu_node, multi_node, gpu_node, sweep_array, killed_rank,
# restart_forwarding, restart_chain, time_limit, stop, no_daemon_left. Exit 0: passed,
# 77: skipped (the reason is printed), anything else: failed.
set -uo pipefail

case_name=${1:?usage: slurm_test.sh CASE}
top=${FRACMFG_SOURCE_DIR:?}
fracmfg=${FRACMFG:?}
root=${SLURM_TEST_DIR:?}
port=${SLURM_TEST_PORT:?}
python=${PYTHON:-/usr/bin/python3}
read -r -a mpiexec <<<"${MPIEXEC:?}"
here=$top/tests/slurm
jobscripts=$top/jobscripts
cluster=$root/cluster
probe_file=$root/probe.env
export SLURM_CONF=$cluster/etc/slurm.conf
export PYTHONDONTWRITEBYTECODE=1
# The environment sbatch passes on must not carry a previous job's settings.
unset DECK ACTION RUN_DIR CHECKPOINT FRACMFG_RESTART CHAIN_INDEX MAX_CHAIN SLURM_JOB_ID \
  RESTART_OPTION STARTUP_GRACE CHAIN_SBATCH_ARGS PETSC_ARGS DECK_LIST DECK_GLOB SWEEP_DIR

skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAILED: $*"
  exit 1
}
note() { echo "slurm_test: $*"; }

# Without Slurm, munge or root there is no local cluster: every test is skipped.
for tool in slurmctld slurmd munged sbatch; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup-deps installs slurm-wlm and munge)"
done
[[ $(id -u) -eq 0 ]] || skip "the local Slurm cluster needs root (slurmd starts the job steps)"

work=$root/$case_name
fresh_work() {
  rm -rf "$work" && mkdir -p "$work" && cd "$work" || fail "cannot create $work"
}

cluster_up() {
  [[ -f "$SLURM_CONF" ]] && "$top/scripts/local-slurm" status --dir "$cluster" >/dev/null 2>&1 ||
    fail "the local cluster in $cluster is not running (the slurm.cluster_start test sets it up)"
}

load_probe() {
  [[ -f "$probe_file" ]] || fail "no $probe_file (the slurm.probe_solvers test writes it)"
  # shellcheck disable=SC1090
  source "$probe_file"
}

# job_field JOBID KEY: KEY's value in `scontrol show job` (first record).
job_field() {
  scontrol show job -o "$1" 2>/dev/null | head -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# expect_job JOBID STATE EXITCODE
expect_job() {
  local state code
  state=$(job_field "$1" JobState)
  code=$(job_field "$1" ExitCode)
  [[ "$state" == "$2" ]] || fail "job $1 is $state, expected $2 (exit code $code)"
  [[ "$code" == "$3" ]] || fail "job $1 ended with exit code $code, expected $3"
  note "job $1: $state, exit code $code"
}

# wait_job_end JOBID SECONDS: until the job has left the running states.
wait_job_end() {
  local i state
  for ((i = 0; i < $2 * 5; ++i)); do
    state=$(job_field "$1" JobState)
    case "$state" in
      PENDING | CONFIGURING | RUNNING | COMPLETING | SUSPENDED | "") sleep 0.2 ;;
      *) return 0 ;;
    esac
  done
  scancel "$1" 2>/dev/null
  fail "job $1 still ${state:-unknown} after $2 s"
}

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds.
wait_for() {
  local limit=$1 what=$2 i
  shift 2
  for ((i = 0; i < limit * 5; ++i)); do
    "$@" && return 0
    sleep 0.2
  done
  fail "$what: not within $limit s"
}

# submit_wait SECONDS SBATCH-ARGS...: `sbatch --wait`, bounded; sets jid and rc.
submit_wait() {
  local limit=$1 out start
  shift
  out=$(mktemp -p "$work" .sbatch.XXXX)
  start=$SECONDS
  timeout -k 5 "$limit" sbatch --wait --parsable "$@" >"$out" 2>&1
  rc=$?
  jid=$(grep -m 1 -oE '^[0-9]+' "$out")
  sed 's/^/sbatch: /' "$out"
  if ((SECONDS - start >= limit)); then
    [[ -n "$jid" ]] && scancel "$jid" 2>/dev/null
    fail "sbatch --wait did not return within $limit s (job ${jid:-?})"
  fi
  [[ -n "$jid" ]] || fail "sbatch did not submit the job"
  note "job $jid: sbatch --wait returned $rc after $((SECONDS - start)) s"
}

# submit_poll SECONDS SBATCH-ARGS...: submit, then poll every 0.2 s until the job ends
# (sbatch --wait polls at 2, 10, 42 s); sets jid and rc (the job's exit code).
submit_poll() {
  local limit=$1
  shift
  jid=$(sbatch --parsable "$@") || fail "sbatch $* failed"
  jid=${jid%%;*}
  wait_job_end "$jid" "$limit"
  rc=$(job_field "$jid" ExitCode)
  rc=${rc%%:*}
  note "job $jid: $(job_field "$jid" JobState), exit code $rc"
}

# show_output FILE: the job's output, indented, in the test log.
show_output() {
  echo "---- $1"
  sed 's/^/  | /' "$1" 2>/dev/null
  echo "----"
}

contains() { grep -qF -- "$2" "$1" || fail "$1 lacks: $2"; }

# resolved_key DECK KEY: output.KEY of the resolved deck (relative paths stay relative).
resolved_key() {
  "$fracmfg" validate --resolved "$1" 2>/dev/null | "$python" -c '
import sys, yaml; print(yaml.safe_load(sys.stdin)["output"][sys.argv[1]])' "$2"
}

# output_file DECK: the deck's results file, relative to the run directory.
output_file() { resolved_key "$1" file; }

# reference_run DIR NP DECK: the deck under mpiexec, outside Slurm.
reference_run() {
  mkdir -p "$1" && (cd "$1" && "${mpiexec[@]}" -n "$2" "$fracmfg" run "$3") >"$1/run.log" 2>&1 ||
    { show_output "$1/run.log"; fail "mpiexec -n $2 fracmfg run $3 failed"; }
}

same_results() {
  "$python" "$here/h5_compare.py" "$1" "$2" || fail "results differ: $1 vs $2"
}

# Every test runs the driver through mpiexec outside Slurm too.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

# ---------------------------------------------------------------------------------------
case_start() {
  mkdir -p "$root"
  "$top/scripts/local-slurm" start --dir "$cluster" --port "$port" || fail "local-slurm start failed"
  [[ -f "$cluster/env.sh" ]] || fail "no $cluster/env.sh"
  grep -qx "export SLURM_CONF=$SLURM_CONF" "$cluster/env.sh" || fail "env.sh does not set SLURM_CONF"
  local host state node
  host=$(hostname -s)
  state=$(sinfo -h -N -n "$host" -o %T)
  [[ "$state" == idle ]] || fail "node $host is '$state', expected idle"
  node=$(scontrol show node "$host")
  echo "$node"
  grep -q "Gres=gpu:2" <<<"$node" || fail "node $host does not offer gres gpu:2"
  grep -q "CPUTot=$(nproc)" <<<"$node" || fail "node $host does not have $(nproc) CPUs"
  # A second start leaves the running cluster alone.
  local again
  again=$("$top/scripts/local-slurm" start --dir "$cluster")
  grep -q "already running" <<<"$again" || fail "a second start did not report the running cluster"
  # Remember the daemons, for slurm.no_daemon_left.
  cat "$cluster/munge/run/munged.pid" "$cluster/run/slurmctld.pid" "$cluster/run/slurmd.pid" \
    >"$root/daemon.pids" || fail "missing pid files"
  note "cluster up: node $host idle, daemons $(tr '\n' ' ' <"$root/daemon.pids")"
}

# Which -ci decks run in this build, and does any solver stop with a checkpoint on SIGUSR1?
# Writes $probe_file: RUN_DECKS (the first deck that runs, per problem type), RUN_DECK
# (the first of them), LONG_FACTOR_<type> (steps factor that keeps a run of that type busy
# for more than LONG_SECONDS), SIGNAL_DECK (a deck whose solver exits 75 on SIGUSR1 within
# STOP_SECONDS: it finishes its time step or outer iteration and writes its checkpoint).
# An mfg run polls after each outer iteration, which sweeps every time step: its steps
# grow from x10 by x3 (x1000 would make one iteration and its checkpoint of every time
# level take longer than a batch system's warning); other types from x1000 by x30.
LONG_SECONDS=2
STOP_SECONDS=10
case_probe() {
  fresh_work
  local deck type rc long pid i run_decks=() types_done=" " types_missing=" " notes=()
  local signal_deck="" signal_notes=() factors=() factor grow most outcome ckpt restart_deck=""
  local restart_option=""
  local restart_notes=()
  for deck in "$top"/inputs/*-ci.yaml; do
    type=$("$python" "$here/deck_tool.py" problem "$deck")
    [[ "$types_done$types_missing" == *" $type "* ]] && continue
    mkdir -p "$work/quick" && (cd "$work/quick" && timeout -s KILL 120 "$fracmfg" run "$deck" >run.log 2>&1)
    rc=$?
    note "$(basename "$deck") ($type): exit $rc"
    case $rc in
      0) run_decks+=("$deck"); types_done+="$type " ;;
      3) types_missing+="$type "; notes+=("$type: not in this build") ;;
      *) notes+=("$(basename "$deck"): exit $rc") ;;
    esac
  done
  for deck in "${run_decks[@]}"; do
    type=$("$python" "$here/deck_tool.py" problem "$deck")
    if [[ "$type" == mfg ]]; then
      factor=10 grow=3 most=1000
    else
      factor=1000 grow=30 most=30000
    fi
    outcome=""
    while [[ -z "$outcome" ]]; do
      long=$work/signal-$type.yaml
      "$python" "$here/deck_tool.py" scale "$deck" "$long" "$factor"
      (cd "$work" && exec "$fracmfg" run "$long" >"signal-$type.log" 2>&1) &
      pid=$!
      # Signal once the solver is at work (a log line of its own) and has stayed at it for
      # LONG_SECONDS, not during start-up; a deck that ends sooner is made longer.
      for ((i = 0; i < 300; ++i)); do
        grep -qE "\] ${type}[: ]" "$work/signal-$type.log" && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      for ((i = 0; i < LONG_SECONDS * 10; ++i)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid"
        rc=$?
        if ((rc == 0 && factor < most)); then
          factor=$((factor * grow))
          continue
        fi
        outcome="steps x$factor ends within ${LONG_SECONDS} s (exit $rc)"
        break
      fi
      kill -USR1 "$pid" 2>/dev/null
      for ((i = 0; i < STOP_SECONDS * 10; ++i)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        outcome="still running $STOP_SECONDS s after SIGUSR1"
        break
      fi
      wait "$pid"
      rc=$?
      if ((rc == 0)); then
        outcome="ran to its end after SIGUSR1 (exit 0)"
      else
        outcome="exit $rc on SIGUSR1"
      fi
    done
    factors+=("LONG_FACTOR_$type=$factor")
    note "$type: steps x$factor: $outcome"
    if [[ "$outcome" != "exit 75 on SIGUSR1" ]]; then
      signal_notes+=("$type: $outcome")
      continue
    fi
    ckpt=$(resolved_key "$long" checkpoint_file)
    if [[ ! -f "$work/$ckpt" ]]; then
      signal_notes+=("$type: exit 75 on SIGUSR1 but no checkpoint $ckpt")
      continue
    fi
    [[ -z "$signal_deck" ]] && signal_deck=$deck
    # Does a run given FRACMFG_RESTART resume from it? The solver names the file it
    # continues from (a path that appears nowhere else in its log).
    cp "$work/$ckpt" "$work/resume-from-$type.chk.h5"
    (cd "$work" && FRACMFG_RESTART=$work/resume-from-$type.chk.h5 exec "$fracmfg" run "$long" \
      >"resume-$type.log" 2>&1) &
    pid=$!
    for ((i = 0; i < 200; ++i)); do
      grep -qF "resume-from-$type.chk.h5" "$work/resume-$type.log" && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if grep -qF "resume-from-$type.chk.h5" "$work/resume-$type.log"; then
      note "$type: resumes from FRACMFG_RESTART"
      restart_deck=$deck
      restart_option=""
      break
    fi
    note "$type: does not resume from FRACMFG_RESTART"
    restart_notes+=("$type: stops with a checkpoint on SIGUSR1 but does not resume from FRACMFG_RESTART")
    # The solver's own PETSc option (-<type>_restart FILE), which the job script can pass
    # with RESTART_OPTION: the chain can be tested through it meanwhile.
    [[ -n "$restart_deck" ]] && continue
    (cd "$work" && exec "$fracmfg" run "$long" -- "-${type}_restart" \
      "$work/resume-from-$type.chk.h5" >"resume-option-$type.log" 2>&1) &
    pid=$!
    for ((i = 0; i < 200; ++i)); do
      grep -qF "resume-from-$type.chk.h5" "$work/resume-option-$type.log" && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if grep -qF "resume-from-$type.chk.h5" "$work/resume-option-$type.log"; then
      note "$type: resumes from the PETSc option -${type}_restart"
      restart_deck=$deck
      restart_option=-${type}_restart
    fi
  done
  {
    echo "# written by slurm_test.sh probe"
    if ((${#run_decks[@]} > 0)); then
      printf 'RUN_DECKS=(%s)\n' "$(printf '%q ' "${run_decks[@]}")"
    else
      echo 'RUN_DECKS=()'
    fi
    printf 'RUN_DECK=%q\n' "${run_decks[0]:-}"
    printf 'PROBE_NOTES=%q\n' "${notes[*]+"${notes[*]}"}"
    printf '%s\n' "${factors[@]+"${factors[@]}"}"
    printf 'SIGNAL_DECK=%q\n' "$signal_deck"
    printf 'SIGNAL_NOTES=%q\n' "$(IFS=';'; echo "${signal_notes[*]+"${signal_notes[*]}"}")"
    printf 'RESTART_DECK=%q\n' "$restart_deck"
    printf 'RESTART_OPTION=%q\n' "$restart_option"
    printf 'RESTART_NOTES=%q\n' "$(IFS=';'; echo "${restart_notes[*]+"${restart_notes[*]}"}")"
  } >"$probe_file"
  cat "$probe_file"
}

# long_deck DECK OUT [TIMES]: DECK made long enough to be interrupted: its steps times
# LONG_FACTOR_<type> (a run of more than LONG_SECONDS), times TIMES (default 1). An mfg
# deck is made TIMES longer by its outer iterations instead, so that each iteration, after
# which it can stop, stays short: a small fixed damping (0.0005, no Anderson) contracts the
# change by about 0.05 % an iteration, so the tolerance 1e-14 takes ~70000 of them (a
# tolerance alone is not enough: a converged fixed point can stop changing to the last bit).
long_deck() {
  local type var
  type=$("$python" "$here/deck_tool.py" problem "$1")
  var=LONG_FACTOR_$type
  if [[ "$type" == mfg && ${3:-1} -gt 1 ]]; then
    "$python" "$here/deck_tool.py" scale "$1" "$2.steps.yaml" "${!var:-10}" &&
      "$python" "$here/deck_tool.py" set "$2.steps.yaml" "$2" mfg.iteration.tolerance=1.0e-14 \
        "mfg.iteration.max_iterations=$((10000 * $3))" mfg.iteration.damping=0.0005 \
        mfg.iteration.schedule=fixed mfg.iteration.anderson=0
    return
  fi
  "$python" "$here/deck_tool.py" scale "$1" "$2" "$((${!var:-1000} * ${3:-1}))"
}

# submit_template NAME TASKS DECK_OR_EMPTY EXTRA_SBATCH_ARGS...: run one template with a
# deck (or `fracmfg info` when no solver runs), check the job and the results.
check_template() {
  local script=$1 np=$2
  shift 2
  fresh_work
  cluster_up
  load_probe
  local action=run deck=${RUN_DECK:-}
  [[ -z "$deck" ]] && action=info
  submit_wait 120 --chdir="$work" --output="$work/job.out" \
    --export="ALL,FRACMFG=$fracmfg,ACTION=$action" "$@" "$jobscripts/$script" ${deck:+"$deck"}
  show_output "$work/job.out"
  ((rc == 0)) || fail "the job's exit code (sbatch --wait) is $rc, expected 0"
  expect_job "$jid" COMPLETED 0:0
  [[ "$(job_field "$jid" NumTasks)" == "$np" ]] || fail "job $jid did not have $np tasks"
  if [[ "$action" == info ]]; then
    contains "$work/job.out" "ranks: $np"
    contains "$work/job.out" "rank $((np - 1)) on"
    note "no solver runs in this build ($PROBE_NOTES): checked \`fracmfg info\` only"
    return 0
  fi
  local out
  out=$(output_file "$deck")
  [[ -f "$work/$out" ]] || fail "the job wrote no $work/$out"
  reference_run "$work/mpiexec" "$np" "$deck"
  same_results "$work/$out" "$work/mpiexec/$out"
}

case_cpu_node() {
  check_template cpu_node.sbatch 2 --ntasks=2
}

case_multi_node() {
  # Several nodes in the template; one here, with the same two ranks.
  check_template multi_node.sbatch 2 --nodes=1 --ntasks-per-node=2
  local nodes
  nodes=$(job_field "$jid" NumNodes)
  [[ "$nodes" == 1 ]] || fail "job $jid ran on $nodes nodes, expected 1"
}

case_gpu_node() {
  check_template gpu_node.sbatch 2
  local tres
  tres=$(job_field "$jid" TresPerNode)
  [[ "$tres" == *gpu:2* ]] || fail "job $jid was not given 2 GPUs per node (TresPerNode=$tres)"
  contains "$work/job.out" "CUDA_VISIBLE_DEVICES=0,1"
  # No device on this machine: every rank reports it has none and runs on the CPU.
  contains "$work/job.out" "node rank 0 of 2"
  contains "$work/job.out" "node rank 1 of 2"
  [[ $(grep -c "placement: cpu" "$work/job.out") -ge 2 ]] || fail "the ranks did not report running without a GPU"
  # More ranks per GPU than the deck allows: the script warns before the run.
  if [[ -n "${RUN_DECK:-}" ]]; then
    "$python" "$here/deck_tool.py" set "$RUN_DECK" "$work/one_per_gpu.yaml" execution.max_ranks_per_gpu=1
    submit_poll 60 --chdir="$work" --output="$work/shared.out" --gpus-per-node=1 \
      --ntasks-per-node=2 \
      --export="ALL,FRACMFG=$fracmfg,ACTION=validate,RANKS_PER_GPU=2,SHOW_PLACEMENT=0" \
      "$jobscripts/gpu_node.sbatch" "$work/one_per_gpu.yaml"
    show_output "$work/shared.out"
    ((rc == 0)) || fail "validate through gpu_node.sbatch failed ($rc)"
    contains "$work/shared.out" "the deck allows 1 rank(s) per GPU"
  fi
}

case_sweep_array() {
  fresh_work
  cluster_up
  load_probe
  local action=run decks=("${RUN_DECKS[@]+"${RUN_DECKS[@]}"}") n i state code out deck name
  if ((${#decks[@]} == 0)); then
    action=validate
    decks=("$top"/inputs/*-ci.yaml)
  fi
  n=${#decks[@]}
  {
    echo "# decks of the sweep, one per line"
    for deck in "${decks[@]}"; do echo "$deck"; echo; done
  } >"$work/decks.txt"
  submit_wait 180 --chdir="$work" --output="$work/slurm-%A_%a.out" --array="0-$((n - 1))" \
    --export="ALL,FRACMFG=$fracmfg,ACTION=$action,DECK_LIST=decks.txt,SWEEP_DIR=sweep" \
    "$jobscripts/sweep_array.sbatch"
  ((rc == 0)) || fail "sbatch --wait returned $rc for the array, expected 0"
  for ((i = 0; i < n; ++i)); do
    show_output "$work/slurm-${jid}_$i.out"
    state=$(job_field "${jid}_$i" JobState)
    code=$(job_field "${jid}_$i" ExitCode)
    [[ "$state" == COMPLETED && "$code" == 0:0 ]] || fail "array index $i: $state, exit code $code"
    deck=${decks[$i]}
    contains "$work/slurm-${jid}_$i.out" "deck $deck"
    name=$(basename "$deck" .yaml)
    [[ -d "$work/sweep/$i-$name" ]] || fail "array index $i did not run in sweep/$i-$name"
    if [[ "$action" == run ]]; then
      out=$(output_file "$deck")
      reference_run "$work/mpiexec-$i" 1 "$deck"
      same_results "$work/sweep/$i-$name/$out" "$work/mpiexec-$i/$out"
    else
      contains "$work/slurm-${jid}_$i.out" "valid"
    fi
  done
  note "all $n array indices ran ($action)"
  # An index past the end of the list fails at once, with the submit line to use.
  submit_poll 60 --chdir="$work" --output="$work/beyond.out" --array="$n" \
    --export="ALL,FRACMFG=$fracmfg,ACTION=$action,DECK_LIST=decks.txt,SWEEP_DIR=sweep" \
    "$jobscripts/sweep_array.sbatch"
  show_output "$work/beyond.out"
  ((rc == 2)) || fail "an index beyond the list ended with $rc, expected 2"
  contains "$work/beyond.out" "--array=0-$((n - 1))"
}

# The global id 1 task's pid of step 0 of job $1 (empty while not started).
task_pid() {
  scontrol listpids "$1" 2>/dev/null | awk '$3 == "0" && $5 == "1" { print $1; exit }'
}

case_killed_rank() {
  fresh_work
  cluster_up
  load_probe
  [[ -n "${RUN_DECK:-}" ]] || skip "no solver runs in this build ($PROBE_NOTES): nothing to kill mid-run"
  local type long pid start elapsed
  type=$("$python" "$here/deck_tool.py" problem "$RUN_DECK")
  long=$work/long.yaml
  long_deck "$RUN_DECK" "$long"
  jid=$(sbatch --parsable --chdir="$work" --output="$work/job.out" --ntasks=2 \
    --export="ALL,FRACMFG=$fracmfg" "$jobscripts/cpu_node.sbatch" "$long") || fail "sbatch failed"
  note "job $jid submitted"
  wait_for 60 "job $jid: the solver at work" grep -qE "\] ${type}[: ]" "$work/job.out"
  pid=$(task_pid "$jid")
  [[ -n "$pid" ]] || { scancel "$jid"; fail "no task 1 in 'scontrol listpids $jid'"; }
  note "SIGKILL to task 1 (pid $pid) of job $jid"
  start=$SECONDS
  kill -KILL "$pid"
  wait_job_end "$jid" 60
  elapsed=$((SECONDS - start))
  show_output "$work/job.out"
  note "job $jid ended $elapsed s after the kill"
  local state code
  state=$(job_field "$jid" JobState)
  code=$(job_field "$jid" ExitCode)
  [[ "$state" == FAILED ]] || fail "job $jid is $state, expected FAILED"
  [[ "$code" != 0:0 ]] || fail "job $jid ended with exit code 0 after a rank was killed"
  ((elapsed <= 30)) || fail "the job took $elapsed s to end after a rank was killed"
  [[ -z "$(scontrol listpids "$jid" 2>/dev/null | awk 'NR > 1')" ]] ||
    fail "processes of job $jid are left: $(scontrol listpids "$jid")"
}

# restart_chain.sbatch with a stand-in solver: SIGUSR1 to the batch shell (as
# --signal=B:USR1@N sends it) reaches every task, and the follow-up job is given the
# checkpoint in FRACMFG_RESTART.
case_restart_forwarding() {
  fresh_work
  cluster_up
  local ckpt=$work/app.chk next
  printf 'problem: fode\n' >"$work/deck.yaml"
  jid=$(sbatch --parsable --chdir="$work" --output="$work/link0.out" --ntasks=2 \
    --export="ALL,FRACMFG=$here/checkpointing_app.sh,CHECKPOINT=$ckpt,MAX_CHAIN=2,STARTUP_GRACE=3" \
    "$jobscripts/restart_chain.sbatch" "$work/deck.yaml") || fail "sbatch failed"
  note "job $jid submitted"
  wait_for 60 "both tasks of job $jid started" test -f "$work/started.0" -a -f "$work/started.1"
  scancel --batch --signal=USR1 "$jid" || fail "scancel --batch --signal=USR1 $jid failed"
  wait_job_end "$jid" 60
  show_output "$work/link0.out"
  expect_job "$jid" COMPLETED 0:0
  contains "$work/link0.out" "asking the run to write a checkpoint and stop"
  [[ -f "$work/usr1.0" && -f "$work/usr1.1" ]] || fail "SIGUSR1 did not reach both tasks"
  [[ -f "$ckpt" ]] || fail "no checkpoint $ckpt"
  next=$(sed -n 's/.*follow-up job \([0-9]*\) (link 1).*/\1/p' "$work/link0.out")
  [[ -n "$next" ]] || fail "job $jid did not submit a follow-up"
  wait_job_end "$next" 60
  show_output "$work/slurm-$next.out"
  expect_job "$next" COMPLETED 0:0
  contains "$work/slurm-$next.out" "link 1 of job chain"
  contains "$work/slurm-$next.out" "FRACMFG_RESTART=$ckpt"
  contains "$work/slurm-$next.out" "rank 0: resumed from $ckpt"
  contains "$work/slurm-$next.out" "rank 1: resumed from $ckpt"
  contains "$work/slurm-$next.out" "run finished (link 1)"
  [[ "$(job_field "$next" NumTasks)" == 2 ]] || fail "the follow-up did not keep the 2 tasks"
}

need_signal_solver() {
  load_probe
  [[ -n "${SIGNAL_DECK:-}" ]] && return 0
  if [[ -z "${RUN_DECK:-}" ]]; then
    skip "no solver runs in this build ($PROBE_NOTES)"
  fi
  skip "no solver writes a checkpoint and exits 75 on SIGUSR1 (${SIGNAL_NOTES}); it needs to" \
    "poll core::stop_requested(), write its checkpoint and throw core::Interrupted"
}

need_restart_solver() {
  need_signal_solver
  [[ -n "${RESTART_DECK:-}" ]] && return 0
  skip "no solver resumes from the checkpoint named by FRACMFG_RESTART (${RESTART_NOTES});" \
    "a run started with FRACMFG_RESTART=<file> must continue from that checkpoint and name" \
    "the file in its log"
}

# calibrated_deck DECK SECONDS OUT DIR: a copy of DECK (steps scaled) whose run with 2
# ranks under mpiexec, in DIR, takes at least SECONDS s; that last run stays in DIR as
# the uninterrupted reference.
calibrated_deck() {
  local deck=$1 target=$2 out=$3 dir=$4 factor=10 start elapsed grow
  while :; do
    "$python" "$here/deck_tool.py" scale "$deck" "$out" "$factor"
    rm -rf "$dir"
    start=$(date +%s%N)
    reference_run "$dir" 2 "$out"
    elapsed=$((($(date +%s%N) - start) / 1000000))
    note "steps x$factor: $elapsed ms under mpiexec -n 2"
    calibrated_ms=$elapsed
    ((elapsed >= target * 1000 || factor >= 100000)) && return 0
    grow=$(((target * 1000 + elapsed - 1) / elapsed))
    ((grow < 2)) && grow=2
    ((grow > 10)) && grow=10
    factor=$((factor * grow))
  done
}

# The whole chain with a real solver: stop on SIGUSR1, resume from FRACMFG_RESTART in the
# follow-up job, and end with the results of an uninterrupted run.
case_restart_chain() {
  fresh_work
  cluster_up
  need_restart_solver
  local deck=$work/chain.yaml type next out
  type=$("$python" "$here/deck_tool.py" problem "$RESTART_DECK")
  calibrated_deck "$RESTART_DECK" 5 "$deck" "$work/mpiexec"
  out=$(output_file "$deck")
  mkdir -p "$work/chain"
  if [[ -n "$RESTART_OPTION" ]]; then
    note "the solver resumes only through RESTART_OPTION=$RESTART_OPTION ($RESTART_NOTES)"
  fi
  jid=$(sbatch --parsable --chdir="$work/chain" --output="$work/chain/link0.out" --ntasks=2 \
    --export="ALL,FRACMFG=$fracmfg,MAX_CHAIN=3,STARTUP_GRACE=2,RESTART_OPTION=$RESTART_OPTION" \
    "$jobscripts/restart_chain.sbatch" "$deck") || fail "sbatch failed"
  wait_for 60 "job $jid: the solver at work" grep -qE "\] ${type}[: ]" "$work/chain/link0.out"
  # Stop it about a third of the way (as far as the uninterrupted run's time tells).
  sleep "$(printf '%d.%02d' $((calibrated_ms * 3 / 10000)) $((calibrated_ms * 3 / 100 % 100)))"
  scancel --batch --signal=USR1 "$jid" || fail "scancel --batch --signal=USR1 $jid failed"
  wait_job_end "$jid" 120
  show_output "$work/chain/link0.out"
  if grep -qF "run finished (link 0)" "$work/chain/link0.out"; then
    fail "the run finished before the signal reached it: the calibrated deck is too short"
  fi
  contains "$work/chain/link0.out" "fracmfg exited with 75"
  expect_job "$jid" COMPLETED 0:0
  next=$(sed -n 's/.*follow-up job \([0-9]*\) (link 1).*/\1/p' "$work/chain/link0.out")
  [[ -n "$next" ]] || fail "job $jid did not submit a follow-up"
  wait_job_end "$next" 180
  show_output "$work/chain/slurm-$next.out"
  expect_job "$next" COMPLETED 0:0
  local ckpt
  ckpt=$(sed -n 's/.*checkpoint \(.*\) written; follow-up.*/\1/p' "$work/chain/link0.out")
  # The solver itself (not the job script) must say it resumed from the checkpoint: the
  # absolute path, which its dump of the resolved deck does not contain.
  grep -v '^restart_chain:' "$work/chain/slurm-$next.out" | grep -qF "$ckpt" ||
    fail "the follow-up run does not mention $ckpt: it did not resume (solvers must read FRACMFG_RESTART)"
  "$python" "$here/h5_compare.py" --final "$work/chain/$out" "$work/mpiexec/$out" ||
    fail "the chain's final results differ from an uninterrupted run"
}

# The real time-limit path: Slurm's --signal=B:USR1@N before a one-minute limit reaches
# the solver, which writes its checkpoint and exits 75 before the limit.
case_time_limit() {
  fresh_work
  cluster_up
  need_signal_solver
  local deck=$work/long.yaml ckpt
  # The run must outlast the signal: at least 20 x LONG_SECONDS.
  long_deck "$SIGNAL_DECK" "$deck" 20
  # Due 45 s after the start of a two-minute job. slurmctld looks at time limits every
  # 30 s and sends the signal up to 30 s early, so it comes 15 to 45 s after the start:
  # late enough that the batch shell is running and 75 s before the limit. (Due 5 s after
  # the start, it could be sent while the job was being launched; one such job never got
  # it, most likely for that reason: the logs below are printed if it happens again.)
  submit_wait 170 --chdir="$work" --output="$work/job.out" --ntasks=2 --time=2 \
    --signal=B:USR1@75 --export="ALL,FRACMFG=$fracmfg,MAX_CHAIN=0" \
    "$jobscripts/restart_chain.sbatch" "$deck"
  show_output "$work/job.out"
  if ! grep -qF "SIGUSR1 received" "$work/job.out"; then
    echo "---- what slurmctld and slurmd logged about job $jid"
    grep -hE "JobId=$jid|job $jid|StepId=$jid|signal" "$cluster/log/slurmctld.log" \
      "$cluster/log/slurmd.log" 2>/dev/null | tail -n 40 | sed 's/^/  | /'
    echo "----"
  fi
  if ((rc == 0)); then
    fail "the run of $deck finished before Slurm's warning signal came: the deck is too short"
  fi
  ((rc == 75)) || fail "the job ended with $rc, expected 75 (checkpoint written, not resubmitted)"
  expect_job "$jid" FAILED 75:0
  contains "$work/job.out" "asking the run to write a checkpoint and stop"
  contains "$work/job.out" "MAX_CHAIN=0 follow-ups reached"
  ckpt=$(sed -n 's/^restart_chain: .* deck .*, checkpoint \(.*\), FRACMFG_RESTART=.*/\1/p' "$work/job.out")
  [[ -f "$ckpt" ]] || fail "no checkpoint '$ckpt'"
}

case_stop() {
  "$top/scripts/local-slurm" stop --dir "$cluster" || fail "local-slurm stop failed"
}

# Nothing of the test cluster is left: neither the daemons recorded at start, nor any
# process whose command line names the test directory (daemons, job tasks, probe runs).
case_no_daemon_left() {
  local pid cmd left=()
  if [[ -f "$root/daemon.pids" ]]; then
    for pid in $(cat "$root/daemon.pids"); do
      cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
      [[ "$cmd" == *"$cluster"* ]] && left+=("$pid")
    done
  fi
  for pid in /proc/[0-9]*; do
    pid=${pid#/proc/}
    cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
    if [[ "$cmd" == *"$root/"* && " ${left[*]-} " != *" $pid "* ]]; then
      left+=("$pid")
    fi
  done
  if ((${#left[@]} > 0)); then
    for pid in "${left[@]}"; do ps -o pid=,args= -p "$pid"; done
    fail "processes of the test cluster are still running"
  fi
  for f in "$cluster/munge/run/munged.pid" "$cluster/run/slurmctld.pid" "$cluster/run/slurmd.pid"; do
    [[ ! -f "$f" ]] || fail "$f is left"
  done
  note "no munged, slurmctld, slurmd or job process of $root is running"
}

case "$case_name" in
  start | probe | cpu_node | multi_node | gpu_node | sweep_array | killed_rank | \
    restart_forwarding | restart_chain | time_limit | stop | no_daemon_left)
    "case_$case_name"
    ;;
  *) fail "unknown case '$case_name'" ;;
esac
echo "PASSED: $case_name"
