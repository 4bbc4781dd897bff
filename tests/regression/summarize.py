#!/usr/bin/python3
"""Summary of a fracmfg result file, and its comparison with a stored reference.

    summarize.py result.h5                    print the summary (JSON)
    summarize.py result.h5 --write ref.json   store it as a reference (default tolerances)
    summarize.py result.h5 --compare ref.json exit 1 when a value is off

The summary holds, per time-series field, the number of steps written and the last
step's min, max, mean and L2 norm, and per convergence history its length and last value.
A reference stores the same numbers with a relative tolerance ('rtol', default 1e-8, for
results that must not depend on the rank count beyond round-off) and an absolute floor
('atol', default 1e-12); iteration counts may differ by 'iterations_slack' (default 0).
"""
import argparse
import json
import sys

import h5py
import numpy as np


def summarize(path):
    out = {"fields": {}, "convergence": {}}
    with h5py.File(path, "r") as f:
        out["problem"] = f.attrs.get("problem", b"").decode() if isinstance(f.attrs.get("problem", b""), bytes) else str(f.attrs.get("problem", ""))
        for name, group in f.get("fields", {}).items():
            values = group["values"]  # [levels][...]: the levels written, in step order
            last = np.asarray(values[-1], dtype=float)
            out["fields"][name] = {
                "steps": int(values.shape[0]),
                "min": float(last.min()),
                "max": float(last.max()),
                "mean": float(last.mean()),
                "l2": float(np.sqrt(np.sum(last * last))),
            }
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
        if got["steps"] != want["steps"]:
            problems.append(f"field {name}: {got['steps']} steps written, expected {want['steps']}")
        for key in ("min", "max", "mean", "l2"):
            if abs(got[key] - want[key]) > atol + rtol * abs(want[key]):
                problems.append(f"field {name} {key}: {got[key]!r} vs reference {want[key]!r}")
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
        with open(a.write, "w") as f:
            json.dump({"rtol": 1e-8, "atol": 1e-12, "iterations_slack": 0, "summary": s}, f, indent=1)
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
