#!/usr/bin/python3
"""compare_fields.py A.h5 B.h5 [--rtol R]

The /fields groups of two results files hold the same objects, the same attributes and the
same values: integers and strings exactly, floating-point datasets to R relative to the
dataset's largest magnitude (max |a - b| <= R * max |a|, so values near zero are judged on
the field's scale, not their own). Prints the largest scaled difference per dataset; exits 1
on the first mismatch.
"""
import argparse
import sys

import h5py
import numpy as np


def same_attrs(a, b, name):
    if sorted(a.attrs.keys()) != sorted(b.attrs.keys()):
        return f"{name}: attributes {sorted(a.attrs.keys())} vs {sorted(b.attrs.keys())}"
    for key in a.attrs.keys():
        x, y = np.asarray(a.attrs[key]), np.asarray(b.attrs[key])
        if x.shape != y.shape or not np.array_equal(x, y):
            return f"{name}: attribute {key}: {x} vs {y}"
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rtol", type=float, default=1e-12)
    args = p.parse_args()
    problems = []
    worst = 0.0
    with h5py.File(args.a, "r") as fa, h5py.File(args.b, "r") as fb:
        names = []
        fa["fields"].visit(names.append)
        other = []
        fb["fields"].visit(other.append)
        if sorted(names) != sorted(other):
            problems.append(f"objects differ: {sorted(set(names) ^ set(other))}")
        for name in sorted(set(names) & set(other)):
            a, b = fa["fields"][name], fb["fields"][name]
            path = f"/fields/{name}"
            msg = same_attrs(a, b, path)
            if msg:
                problems.append(msg)
            if not isinstance(a, h5py.Dataset):
                continue
            x, y = a[...], b[...]
            if x.shape != y.shape or x.dtype != y.dtype:
                problems.append(f"{path}: {x.shape} {x.dtype} vs {y.shape} {y.dtype}")
            elif x.dtype.kind == "f":
                scale = float(np.max(np.abs(x))) if x.size else 0.0
                diff = float(np.max(np.abs(x - y))) if x.size else 0.0
                scaled = diff / scale if scale > 0 else diff
                worst = max(worst, scaled)
                print(f"compare_fields: {path}: max |a - b| / max |a| = {scaled:.3g}")
                if not scaled <= args.rtol:
                    problems.append(f"{path}: max |a - b| / max |a| = {scaled:.3g} > {args.rtol:g}")
            elif not np.array_equal(x, y):
                problems.append(f"{path}: values differ")
    for msg in problems:
        print(f"compare_fields: {msg}", file=sys.stderr)
    print(f"compare_fields: {len(names)} objects, largest scaled difference {worst:.3g}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
