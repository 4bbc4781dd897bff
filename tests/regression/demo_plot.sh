#!/usr/bin/env bash
# demo_plot.sh WORKDIR DECK FRACMFG MPIRUN...
# The demo path as a user takes it: run the deck on 2 ranks, draw the result with
# scripts/plot, then check the picture: a PNG of a sensible size that is not blank (many
# distinct colours, the heat maps' pixels vary), and a convergence panel whose log axis
# holds the measured changes and the tolerance line, with the damping on an axis of its own
# (check_plot_facts.py, from the axes' facts scripts/plot dumps).
set -euo pipefail
work=$1 deck=$2 fracmfg=$3
shift 3
top=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$@" 2 "$fracmfg" run "$deck"
out=$("$fracmfg" validate --resolved "$deck" | /usr/bin/python3 -c '
import sys, yaml; print(yaml.safe_load(sys.stdin)["output"]["file"])')
"$top/scripts/plot" "$out" -o picture.png --facts facts.json | tee plot.txt
# A 1D game is drawn as m(x, t), u(x, t), the convergence history and m(x) at a few times:
# four panels, none left empty.
grep -q "2x2 panels: m(x, t); u(x, t); convergence history; m(x) at a few times" plot.txt || {
  echo "demo_plot: scripts/plot did not draw the four panels of a 1D game"; exit 1; }
/usr/bin/python3 - picture.png <<'PY'
import sys
import matplotlib.image as mpimg
import numpy as np
img = mpimg.imread(sys.argv[1])
h, w = img.shape[:2]
rgb = img[..., :3].reshape(-1, 3)
colours = len(np.unique((rgb * 255).astype(np.uint8), axis=0))
spread = float(rgb.std())
print(f"demo_plot: {w}x{h} pixels, {colours} colours, std {spread:.3f}")
assert w >= 600 and h >= 400, "picture too small"
assert colours >= 200, "picture looks blank (too few colours)"
assert spread > 0.05, "picture looks blank (no contrast)"
# Each quarter of the 2 x 2 figure holds a drawn panel: many colours, not just the axes.
for r in range(2):
    for c in range(2):
        q = img[r * h // 2:(r + 1) * h // 2, c * w // 2:(c + 1) * w // 2, :3].reshape(-1, 3)
        n = len(np.unique((q * 255).astype(np.uint8), axis=0))
        print(f"demo_plot: panel ({r}, {c}): {n} colours")
        assert n >= 200, f"panel ({r}, {c}) looks empty ({n} colours)"
PY
/usr/bin/python3 "$top/tests/regression/check_plot_facts.py" facts.json "$out"
