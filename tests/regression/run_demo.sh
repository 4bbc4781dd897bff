#!/usr/bin/env bash
# run_demo.sh WORKDIR BUILD_DIR
# scripts/run-demo as a newcomer runs it, on the small demo deck and an existing build
# directory (the build step then only checks that everything is current): every phase is
# announced and timed, the build shows its progress up to the command's target, the run
# writes its result and the picture is drawn.
set -euo pipefail
work=$1 build_dir=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work" && mkdir -p "$work"
sed "s|results/demo-ci.h5|$work/demo-ci.h5|" "$top/inputs/demo-ci.yaml" >"$work/demo-ci.yaml"
"$top/scripts/run-demo" --build-dir "$build_dir" "$work/demo-ci.yaml" >"$work/out.txt" 2>&1 || {
  cat "$work/out.txt"; echo "run_demo: scripts/run-demo failed"; exit 1; }
fail() { cat "$work/out.txt"; echo "run_demo: $*"; exit 1; }
for n in 1 2 3 4; do
  grep -q "^run-demo: \[$n/4\] " "$work/out.txt" || fail "phase $n/4 was not announced"
done
for phase in dependencies build run plot; do
  grep -Eq "^run-demo: $phase done in [0-9]+ (s|min [0-9]+ s)$" "$work/out.txt" ||
    fail "phase '$phase' has no time"
done
grep -Eq '^ +[0-9]+s \[100%\] Built target fracmfg_driver$' "$work/out.txt" ||
  fail "no build progress line for the fracmfg command"
grep -q "^run-demo: time per phase: dependencies .*, build .*, run .*, plot .*" "$work/out.txt" ||
  fail "no summary of the phases"
[[ -s "$build_dir.log" ]] || fail "no build log at $build_dir.log"
[[ -s "$work/demo-ci.h5" && -s "$work/demo-ci.png" ]] || fail "no result or picture in $work"
echo "run_demo: phases announced and timed, build progress shown, result and picture written"
