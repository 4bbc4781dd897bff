#!/usr/bin/env bash
# run_case.sh WORKDIR DECK REFERENCE NP FRACMFG MPIRUN...
# Runs the deck with NP ranks inside WORKDIR (its relative output paths land there) and
# compares the output file's summary with REFERENCE.
set -euo pipefail
work=$1 deck=$2 ref=$3 np=$4 fracmfg=$5
shift 5
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$@" "$np" "$fracmfg" run "$deck"
out=$("$fracmfg" validate --resolved "$deck" | /usr/bin/python3 -c '
import sys, yaml; print(yaml.safe_load(sys.stdin)["output"]["file"])')
exec /usr/bin/python3 "$(dirname "$0")/summarize.py" "$out" --compare "$ref"
