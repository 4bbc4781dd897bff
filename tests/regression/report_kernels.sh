#!/usr/bin/env bash
# report_kernels.sh WORKDIR DECK FRACMFG MPIRUN...
# Runs DECK on 2 ranks inside WORKDIR (its relative output paths land there) with
# execution.report switched on and the rest of the deck as it is, so that the caller can check
# the names in the kernel table printed at the end.
set -euo pipefail
work=$1 deck=$2 fracmfg=$3
shift 3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
sed 's/^execution:.*/execution: {backend: auto, learn: false, report: true}/' "$deck" >deck.yaml
grep -q "report: true" deck.yaml
exec "$@" 2 "$fracmfg" run deck.yaml
