#!/usr/bin/python3
"""Checks the convergence panel that scripts/plot draws for a game, from the facts it dumps
(scripts/plot RESULT -o PNG --facts JSON):

    check_plot_facts.py FACTS.json RESULT.h5     # the facts of a drawn result file
    check_plot_facts.py --synthetic WORKDIR      # a made-up 1D game file, drawn and checked

What must hold on the panel of the relative changes: a log axis whose lower limit is not
below a tenth of the smallest positive change in /convergence (an exact 0, an iteration
that changed nothing, is not drawn) nor below 1e-20; no drawn value at or below 0; the
tolerance (the attribute of /convergence, else the resolved deck's) as a horizontal line
inside the limits when it lies within a decade of the measured changes; the damping on a
twin axis of its own, linear. The synthetic file follows the layout of
include/fracmfg/io/h5_layout.hpp and src/mfg/solver_output.cpp (fields u and m with their
times, /convergence/{u,m,damping} and the group's attributes), with exact zeros in the last
iterations, as Newton's method and converged games write them. Exit code 77 when h5py or
matplotlib is missing.
"""
import json
import os
import subprocess
import sys

try:
    import h5py
    import numpy as np
    import matplotlib  # noqa: F401  (scripts/plot needs it)
except ImportError as e:
    print(f"check_plot_facts: skipped: {e}")
    sys.exit(77)

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fail(msg):
    print(f"check_plot_facts: {msg}")
    sys.exit(1)


def measured(result):
    with h5py.File(result, "r") as f:
        group = f["convergence"]
        changes = [np.asarray(group[name][...], dtype=float) for name in group
                   if name != "damping"]
        tol = group.attrs.get("tolerance")
        if tol is None and "resolved_deck" in f.attrs:
            import yaml
            text = f.attrs["resolved_deck"]
            text = text.decode() if isinstance(text, bytes) else text
            tol = yaml.safe_load(text)["mfg"]["iteration"]["tolerance"]
        has_damping = "damping" in group
    positive = np.concatenate([c[np.isfinite(c) & (c > 0)] for c in changes])
    return positive, (float(tol) if tol is not None else None), has_damping


def check(facts_path, result):
    facts = json.load(open(facts_path))
    panels = {p["label"]: p for p in facts["panels"]}
    conv = panels.get("convergence")
    if conv is None:
        fail(f"{facts_path}: no convergence panel among {sorted(panels)}")
    positive, tol, has_damping = measured(result)
    lo, hi = conv["ylim"]
    smallest = float(positive.min())
    print(f"check_plot_facts: changes {smallest:.3g} .. {float(positive.max()):.3g}, "
          f"tolerance {tol}, axis {conv['yscale']} {lo:.3g} .. {hi:.3g}")
    if conv["yscale"] != "log":
        fail(f"the relative changes are on a {conv['yscale']} axis, not a log axis")
    if lo < smallest / 10.0 * (1 - 1e-9):
        fail(f"the axis goes down to {lo:.3g}, below a tenth of the smallest measured change "
             f"{smallest:.3g}")
    if lo < 1e-20:
        fail(f"the axis goes down to {lo:.3g} (below 1e-20)")
    if hi < float(positive.max()):
        fail(f"the axis ends at {hi:.3g}, below the largest change {float(positive.max()):.3g}")
    for line in conv["lines"]:
        if line["min"] is not None and line["min"] <= 0:
            fail(f"the line '{line['label']}' draws a value {line['min']} <= 0")
    if tol is not None:
        lines = [l for l in conv["lines"] if l["label"].startswith("tolerance")]
        if not lines:
            fail(f"no tolerance line among {[l['label'] for l in conv['lines']]}")
        if abs(lines[0]["min"] - tol) > 1e-12 * tol or lines[0]["max"] != lines[0]["min"]:
            fail(f"the tolerance line is at {lines[0]['min']}..{lines[0]['max']}, not {tol}")
        if tol >= smallest / 10.0 and not lo <= tol <= hi:
            fail(f"the tolerance {tol} lies outside the axis {lo:.3g} .. {hi:.3g}")
    if has_damping:
        twin = panels.get("convergence damping")
        if twin is None:
            fail("the damping has no axis of its own")
        if twin["yscale"] != "linear" or twin["ylim"][0] != 0.0:
            fail(f"the damping axis is {twin['yscale']} from {twin['ylim'][0]}, not linear from 0")
        if not any(l["label"] in ("damping", "step length") for l in twin["lines"]):
            fail("the damping axis has no damping line")
        if any(l["label"] in ("damping", "step length") for l in conv["lines"]):
            fail("the damping shares the axis of the relative changes")
    print(f"check_plot_facts: {os.path.basename(result)}: the convergence panel is right")


def synthetic_game(path, with_attribute=True):
    """A 1D game's results file: 30 points, 11 levels, 12 iterations of which the last
    changes of u are exact zeros."""
    nx, levels = 30, 11
    x = (np.arange(nx) + 0.5) / nx
    t = np.linspace(0.0, 1.0, levels)
    change_u = np.array([1.0, 0.4, 0.12, 3e-2, 6e-3, 9e-4, 1e-4, 8e-6, 4e-7, 2e-8, 0.0, 0.0])
    change_m = np.array([1.2, 0.5, 0.2, 5e-2, 1e-2, 2e-3, 3e-4, 3e-5, 2e-6, 9e-8, 4e-9, 0.0])
    damping = np.array([1.0] + [0.5] * 11)
    deck = ("problem: mfg\nmfg:\n  iteration:\n    method: fixed_point\n    damping: 0.5\n"
            "    tolerance: 1.0e-7\n")
    with h5py.File(path, "w") as f:
        f.attrs["layout_version"] = 2
        f.attrs["problem"] = "mfg"
        f.attrs["resolved_deck"] = deck
        for name, values in (("u", np.outer(1 - t, np.cos(2 * np.pi * x))),
                             ("m", np.exp(-(x[None, :] - 0.3 - 0.2 * t[:, None]) ** 2 / 0.01))):
            g = f.create_group(f"fields/{name}")
            ds = g.create_dataset("values", data=values, maxshape=(None, nx))
            ds.attrs["dim"] = 1
            ds.attrs["origin"] = [x[0]]
            ds.attrs["spacing"] = [1.0 / nx]
            g.create_dataset("time", data=t)
            g.create_dataset("step", data=np.arange(levels) * 2)
        c = f.create_group("convergence")
        c.create_dataset("u", data=change_u)
        c.create_dataset("m", data=change_m)
        c.create_dataset("damping", data=damping)
        c.attrs["iterations"] = len(change_u)
        c.attrs["method"] = "fixed_point"
        c.attrs["converged"] = 1
        if with_attribute:
            c.attrs["tolerance"] = 1e-7
        f.create_dataset("mfg/mass", data=np.ones(levels))


def synthetic(work):
    os.makedirs(work, exist_ok=True)
    for name, with_attribute in (("game", True), ("game_without_attribute", False)):
        result = os.path.join(work, f"{name}.h5")
        synthetic_game(result, with_attribute)
        facts = os.path.join(work, f"{name}.json")
        subprocess.run([os.path.join(TOP, "scripts", "plot"), result, "-o",
                        os.path.join(work, f"{name}.png"), "--facts", facts], check=True)
        check(facts, result)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--synthetic":
        synthetic(sys.argv[2])
    elif len(sys.argv) == 3:
        check(sys.argv[1], sys.argv[2])
    else:
        print(__doc__.split("\n\n")[1])
        sys.exit(2)


if __name__ == "__main__":
    main()
