#!/usr/bin/python3
"""Summary of a fracmfg result file, and its comparison with a stored reference.

    summarize.py result.h5                    print the summary (JSON)
    summarize.py result.h5 --write ref.json   store it as a reference (keeps ref.json's
                                              tolerances when it exists, else the defaults)
    summarize.py result.h5 --compare ref.json exit 1 when a value is off

The summary holds, per time-series field, the number of levels written, the level it
summarises (its index and time) with that level's min, max, mean and L2 norm, and the L2 norm
over all levels; per convergence history its length and last value.

A field is summarised at the level where the solver computes it, never where the deck
prescribes it (a comparison with prescribed data cannot fail): the game's value function u
is solved backward from the terminal cost given at t = T, so it is summarised at the first
level (t = 0); the density m forward from the initial density, so at the last level (t = T);
the fractional ODE and PDE solutions start from their initial values, so at the last level.

A reference stores the same numbers with a relative tolerance ('rtol', default 1e-8, for
results that must not depend on the rank count beyond round-off) and an absolute floor
('atol', default 1e-12); iteration counts may differ by 'iterations_slack' (default 0).
Regenerate every reference from a Release build: tests/regression/update_references.sh.
"""
import argparse
import json
import os
import sys

import h5py
import numpy as np

# (problem, field) -> the level index the solver computes; every other field: the last level.
SUMMARY_LEVEL = {("mfg", "u"): 0}


def text_attr(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def level_summary(level):
    return {
        "min": float(level.min()),
        "max": float(level.max()),
        "mean": float(level.mean()),
        "l2": float(np.sqrt(np.sum(level * level))),
    }


def summarize(path):
    out = {"fields": {}, "convergence": {}}
    with h5py.File(path, "r") as f:
        problem = text_attr(f.attrs.get("problem", ""))
        out["problem"] = problem
        for name, group in f.get("fields", {}).items():
            values = np.asarray(group["values"][...], dtype=float)  # [levels][...], step order
            times = np.asarray(group["time"][...], dtype=float)
            levels = values.shape[0]
            index = SUMMARY_LEVEL.get((problem, name), -1) % levels
            entry = {"steps": int(levels), "level": int(index), "time": float(times[index])}
            entry.update(level_summary(values[index]))
            entry["l2_all_levels"] = float(np.sqrt(np.sum(values * values)))
            out["fields"][name] = entry
        for name, ds in f.get("convergence", {}).items():
            values = np.asarray(ds[...], dtype=float)
            out["convergence"][name] = {"iterations": int(values.size),
                                        "last": float(values[-1]) if values.size else 0.0}
    return out


def compare(summary, ref):
    rtol = ref.get("rtol", 1e-8)
    atol = ref.get("atol", 1e-12)
    slack = ref.get("iterations_slack", 0)
    problems = []
    for name, want in ref["summary"]["fields"].items():
        got = summary["fields"].get(name)
        if got is None:
            problems.append(f"field {name} missing")
            continue
        for key in ("steps", "level"):
            if got[key] != want[key]:
                problems.append(f"field {name}: {key} {got[key]}, expected {want[key]}")
        where = f"field {name} at level {got['level']} (t = {got['time']:g})"
        for key in ("time", "min", "max", "mean", "l2", "l2_all_levels"):
            if abs(got[key] - want[key]) > atol + rtol * abs(want[key]):
                problems.append(f"{where} {key}: {got[key]!r} vs reference {want[key]!r}")
    for name, want in ref["summary"].get("convergence", {}).items():
        got = summary["convergence"].get(name)
        if got is None:
            problems.append(f"convergence history {name} missing")
        elif abs(got["iterations"] - want["iterations"]) > slack:
            problems.append(f"{name}: {got['iterations']} iterations, reference {want['iterations']}")
    return problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument("result")
    p.add_argument("--write")
    p.add_argument("--compare")
    a = p.parse_args()
    s = summarize(a.result)
    if a.write:
        ref = {"rtol": 1e-8, "atol": 1e-12, "iterations_slack": 0}
        if os.path.exists(a.write):
            with open(a.write) as f:
                old = json.load(f)
            ref.update({k: old[k] for k in ref if k in old})
        ref["summary"] = s
        with open(a.write, "w") as f:
            json.dump(ref, f, indent=1)
            f.write("\n")
        print(f"summarize: wrote {a.write}")
        return 0
    if a.compare:
        with open(a.compare) as f:
            ref = json.load(f)
        problems = compare(s, ref)
        for line in problems:
            print("regression: " + line)
        print("regression: " + ("FAILED" if problems else "matches ") + f" {a.compare}")
        return 1 if problems else 0
    print(json.dumps(s, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
