#!/usr/bin/env bash
# exits_check.sh WORKDIR DECK NP FRACMFG MPIRUN...
# Runs a deck with exits (and an obstacle) on NP ranks and checks its results with
# check_exits.py: m >= 0, no density inside the obstacle, the mass balance with the outflow.
set -euo pipefail
work=$1 deck=$2 np=$3 fracmfg=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
out=$("$fracmfg" validate --resolved "$deck" | /usr/bin/python3 -c '
import sys, yaml; print(yaml.safe_load(sys.stdin)["output"]["file"])')
(cd "$work" && "$@" "$np" "$fracmfg" run "$deck" >run.log 2>&1) ||
  { cat "$work/run.log"; echo "exits_check: the run failed" >&2; exit 1; }
/usr/bin/python3 "$here/check_exits.py" "$work/$out"
