#!/usr/bin/env bash
# The communication model of docs/performance.md ("Scaling beyond one node"): counts the
# messages, bytes and collectives per outer iteration (2D MFG) and per time step (FPDE 1D and
# 2D) at 1, 2 and 3 ranks on two grids each (PETSc's -log_view and Open MPI's monitoring
# components), measures this machine's MPI latency and bandwidth (perf/scaling_pingpong.c),
# checks the model against the measured times and predicts weak-scaling efficiency at 64,
# 256 and 1000 ranks for HDR InfiniBand and 25 GbE. About 2-3 minutes on 2 cores.
#
#   perf/scaling_model.sh                      # Release build in build/
#   perf/scaling_model.sh build --json f.json  # keep the raw figures
#   perf/scaling_model.sh build --quick        # the smaller grids only, no block sweep
#   perf/scaling_model.py --from-json f.json   # the tables again, from kept figures
#
# Build first: scripts/build --target bench_mfg --target fracmfg_driver
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build}"
[[ $# -gt 0 ]] && shift
[[ "$build" = /* ]] || build="$here/$build"
# Shared-memory transport as the project's MPI tests use it (no CMA inside containers).
export OMPI_MCA_btl="${OMPI_MCA_btl:-self,vader}"
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
if ! ompi_info 2>/dev/null | grep -q "MCA pml: monitoring"; then
  echo "scaling_model.sh: needs Open MPI's monitoring components (ompi_info lists 'MCA pml: monitoring')" >&2
  exit 1
fi
exec python3 "$here/perf/scaling_model.py" --build "$build" "$@"
