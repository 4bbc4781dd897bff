#!/bin/sh
# Builds perf/bench_fode in Release and runs it (the figures of docs/performance.md, section
# "Fractional ODEs"). One core: OMP/Kokkos threads are not used by the scalar runs.
#
#   perf/fode_benchmark.sh                      # build dir build-release, full tables
#   perf/fode_benchmark.sh build-rel --max-log2 20 --direct-max 10000
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$src/build-release"}
[ $# -gt 0 ] && shift
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFRACMFG_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target bench_fode -j"${JOBS:-2}"
exec "$build/perf/bench_fode" "$@"
