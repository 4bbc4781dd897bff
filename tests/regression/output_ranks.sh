#!/usr/bin/env bash
# output_ranks.sh WORKDIR DECK FRACMFG MPIRUN...
# The results of a deck written on 1, 2 and 3 ranks: the field datasets (/fields, values,
# times, steps and their attributes) are the same (compare_fields.py: objects, attributes,
# integers exactly; values to 1e-10 of each dataset's largest magnitude: the Krylov solves
# of the 2D game stop at a tolerance and round differently on other rank counts, 1.1e-12
# measured, the 1D game and the 2D fpde 1e-15 and 2e-13; the writer itself stores any
# decomposition bit for bit, tests/mpi/h5_roundtrip_test.cpp), and the XDMF sidecar of each
# run opens in ParaView's own reader (pvpython) with every level equal to the HDF5 data and
# every point where the field's geometry puts it (xdmf_paraview_check.py). Without pvpython
# the ParaView part is skipped with a message (exit 77, ctest's skip) after the h5diff part.
set -euo pipefail
work=$1 deck=$2 fracmfg=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
out=$("$fracmfg" validate --resolved "$deck" | /usr/bin/python3 -c '
import sys, yaml; print(yaml.safe_load(sys.stdin)["output"]["file"])')
for np in 1 2 3; do
  mkdir -p "$work/np$np"
  (cd "$work/np$np" && "$@" "$np" "$fracmfg" run "$deck" >run.log 2>&1) ||
    { cat "$work/np$np/run.log"; echo "output_ranks: the run on $np rank(s) failed" >&2; exit 1; }
done
for np in 2 3; do
  if ! /usr/bin/python3 "$here/compare_fields.py" --rtol 1e-10 "$work/np1/$out" "$work/np$np/$out" \
    >"$work/compare.np$np.txt" 2>&1; then
    cat "$work/compare.np$np.txt"
    echo "output_ranks: the fields written on $np ranks differ from those written on 1" >&2
    exit 1
  fi
  echo "output_ranks: $np ranks against 1: $(tail -n 1 "$work/compare.np$np.txt")"
done
if ! command -v pvpython >/dev/null 2>&1; then
  echo "output_ranks: SKIP the ParaView check: pvpython not found (Debian's paraview, scripts/setup-deps)"
  exit 77
fi
levels=$(/usr/bin/python3 -c '
import sys, h5py
with h5py.File(sys.argv[1], "r") as f: print(f["time"].shape[0])' "$work/np1/$out")
for np in 1 2 3; do
  pvpython "$here/xdmf_paraview_check.py" "$work/np$np/${out%.h5}.xmf" --levels "$levels"
done
