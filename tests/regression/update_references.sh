#!/usr/bin/env bash
# update_references.sh BUILD_DIR [STEM...]
# Regenerates the stored regression references (tests/regression/references/<stem>.json)
# from the -ci decks: runs each deck on one rank with BUILD_DIR/bin/fracmfg (a Release build,
# as scripts/build makes it) in a scratch directory and writes its summary, keeping the
# reference's tolerances. Without STEMs, every deck that has a reference. Then check the
# result on 1 and 2 ranks: ctest -R '^regression\.' in BUILD_DIR.
#   tests/regression/update_references.sh build crowd_1d-ci demo-ci
set -euo pipefail
[[ $# -ge 1 ]] || { sed -n '2,8p' "$0"; exit 2; }
build=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
fracmfg="$build/bin/fracmfg"
grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$build/CMakeCache.txt" ||
  echo "update_references: warning: $build is not a Release build" >&2
stems=("$@")
if [[ ${#stems[@]} -eq 0 ]]; then
  for ref in "$here"/references/*.json; do stems+=("$(basename "$ref" .json)"); done
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for stem in "${stems[@]}"; do
  deck="$top/inputs/$stem.yaml"
  (cd "$work" && "$fracmfg" run "$deck" >"$stem.log" 2>&1) || {
    cat "$work/$stem.log"; echo "update_references: $stem failed" >&2; exit 1; }
  out=$("$fracmfg" validate --resolved "$deck" | /usr/bin/python3 -c '
import sys, yaml; print(yaml.safe_load(sys.stdin)["output"]["file"])')
  /usr/bin/python3 "$here/summarize.py" "$work/$out" --write "$here/references/$stem.json"
done
