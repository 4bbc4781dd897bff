#!/usr/bin/python3
"""Compares two fracmfg result files: every dataset and every numeric attribute.

    h5_compare.py A.h5 B.h5 [--rtol R] [--ignore REGEX] [--final]

Exit 0 when both files hold the same objects and their values agree (bitwise by default;
within the relative tolerance R of the larger magnitude with --rtol), else 1 with the
differences. Not compared: string attributes (creation time, deck path, revision) and
objects whose path matches --ignore (default: wall-clock times such as /mfg/seconds).
With --final only the last written step of each field in /fields is compared (a run
resumed from a checkpoint may not repeat the steps written before it).
"""
import argparse
import re
import sys

import h5py
import numpy as np


def collect(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            for key, value in obj.attrs.items():
                arr = np.asarray(value)
                if arr.dtype.kind in "biuf":
                    out[f"{name}@{key}"] = arr.astype(float)
            if isinstance(obj, h5py.Dataset) and obj.dtype.kind in "biuf":
                out[name] = np.asarray(obj[...], dtype=float)
        visit("/", f)
        f.visititems(visit)
    return out


def final_fields(path):
    """The last level of each time-series field: {"fields/u/<step>": values, ...@time, @step}."""
    out = {}
    with h5py.File(path, "r") as f:
        for name, group in f.get("fields", {}).items():
            if not isinstance(group, h5py.Group) or "values" not in group:
                continue
            values = group["values"]
            if values.shape[0] == 0:
                continue
            step = int(group["step"][-1])
            key = f"fields/{name}/{step:06d}"
            out[key] = np.asarray(values[-1], dtype=float)
            out[f"{key}@time"] = np.asarray(group["time"][-1], dtype=float)
            out[f"{key}@step"] = np.asarray(step, dtype=float)
            for attr, value in values.attrs.items():
                arr = np.asarray(value)
                if arr.dtype.kind in "biuf":
                    out[f"{key}@{attr}"] = arr.astype(float)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rtol", type=float, default=0.0)
    p.add_argument("--ignore", default=r"(^|/)seconds($|@)")
    p.add_argument("--final", action="store_true")
    args = p.parse_args()
    ignore = re.compile(args.ignore)
    read = final_fields if args.final else collect
    a = {k: v for k, v in read(args.a).items() if not ignore.search(k)}
    b = {k: v for k, v in read(args.b).items() if not ignore.search(k)}
    if not a and not b:
        print(f"h5_compare: nothing to compare in {args.a} and {args.b}")
        return 1
    problems = []
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            problems.append(f"{name}: only in {args.a if name in a else args.b}")
            continue
        x, y = a[name], b[name]
        if x.shape != y.shape:
            problems.append(f"{name}: shape {x.shape} vs {y.shape}")
            continue
        if np.array_equal(x, y):
            continue
        scale = max(float(np.max(np.abs(x), initial=0.0)), float(np.max(np.abs(y), initial=0.0)))
        diff = float(np.max(np.abs(x - y), initial=0.0))
        if not np.all(np.isfinite(x)) or not np.all(np.isfinite(y)) or diff > args.rtol * scale:
            problems.append(f"{name}: max difference {diff:.3e} (values up to {scale:.3e})")
    if problems:
        print(f"h5_compare: {args.a} and {args.b} differ:")
        for line in problems[:20]:
            print("  " + line)
        if len(problems) > 20:
            print(f"  ... and {len(problems) - 20} more")
        return 1
    print(f"h5_compare: {len(a)} datasets and numeric attributes agree"
          + (" bitwise" if args.rtol == 0.0 else f" within rtol {args.rtol:g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
