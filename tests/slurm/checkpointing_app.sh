#!/bin/bash
# Stand-in for `fracmfg run DECK` in the test of restart_chain.sbatch's signal path: it
# behaves as a solver that polls for SIGUSR1, so the job script's forwarding and
# resubmission can be tested whatever the solvers support.
#   - without FRACMFG_RESTART: each task writes started.<rank> in the current directory
#     and works until SIGUSR1; then it writes usr1.<rank>, rank 0 writes the checkpoint
#     $CHECKPOINT, and every task exits 75 (like fracmfg after core::Interrupted);
#   - with FRACMFG_RESTART: each task checks the file exists, says it resumed from it,
#     writes resumed.<rank> and exits 0 (5 when the file is missing).
# `validate` and `info` are answered as fracmfg would (exit 0), for the job script's checks.
set -u
rank=${SLURM_PROCID:-0}
case "${1:-}" in
  run) ;;
  validate | info) echo "checkpointing_app: $1 ok"; exit 0 ;;
  *) echo "checkpointing_app: usage: checkpointing_app.sh run DECK" >&2; exit 2 ;;
esac

if [[ -n "${FRACMFG_RESTART:-}" ]]; then
  if [[ ! -f "$FRACMFG_RESTART" ]]; then
    echo "checkpointing_app: rank $rank: no checkpoint '$FRACMFG_RESTART'" >&2
    exit 5
  fi
  echo "checkpointing_app: rank $rank: resumed from $FRACMFG_RESTART"
  echo "$FRACMFG_RESTART" >"resumed.$rank"
  exit 0
fi

stop=0
trap 'stop=1' USR1
echo "checkpointing_app: rank $rank: running (pid $$)"
: >"started.$rank"
# Short sleeps so the trap runs promptly; give up after 120 s so that nothing lingers.
for ((i = 0; i < 1200 && stop == 0; ++i)); do sleep 0.1; done
if ((stop == 0)); then
  echo "checkpointing_app: rank $rank: no SIGUSR1 within 120 s" >&2
  exit 1
fi
echo "$(date +%s.%N)" >"usr1.$rank"
if ((rank == 0)); then
  echo "checkpoint of checkpointing_app" >"${CHECKPOINT:?CHECKPOINT not set}"
fi
echo "checkpointing_app: rank $rank: SIGUSR1 received; checkpoint written to ${CHECKPOINT:-?}"
exit 75
