#!/usr/bin/python3
"""check_exits.py RESULTS.h5 [--tol T]

The results of a game with exits (and an obstacle): m >= 0 at every written level, m = 0
inside the obstacle (/mfg/obstacle, natural order as the fields), the mass that has left
(/mfg/outflow) never decreases, and the mass in the domain plus the mass that left stays
the initial mass (/mfg/mass[0]) to T (the iteration's tolerance: each Fokker-Planck step
balances to round-off, the state blends the sweeps). Prints the figures; exit 1 on a failure.
"""
import argparse
import sys

import h5py
import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--tol", type=float, default=1e-6)
    args = parser.parse_args()
    failures = []
    with h5py.File(args.results, "r") as f:
        mass = np.asarray(f["mfg/mass"][...], dtype=float)
        outflow = np.asarray(f["mfg/outflow"][...], dtype=float)
        m = np.asarray(f["fields/m/values"][...], dtype=float)
        levels = m.shape[0]
        flat = m.reshape(levels, -1)
        if flat.min() < 0.0:
            failures.append(f"negative density {flat.min():.3e}")
        if "obstacle" in f["mfg"]:
            mask = np.asarray(f["mfg/obstacle"][...], dtype=float) > 0.5
            inside = np.abs(flat[:, mask]).max() if mask.any() else 0.0
            print(f"check_exits: {int(mask.sum())} obstacle points, max |m| inside {inside:.3e}")
            if inside != 0.0:
                failures.append(f"density inside the obstacle: {inside:.3e}")
        if np.any(np.diff(outflow) < 0.0):
            failures.append("the outflow decreases")
        imbalance = np.abs(mass + outflow - mass[0]).max()
        print(f"check_exits: mass left by T {outflow[-1]:.6f}, in the domain {mass[-1]:.6f}, "
              f"max |mass + outflow - mass(0)| {imbalance:.3e}")
        if not imbalance <= args.tol:
            failures.append(f"mass balance off by {imbalance:.3e} > {args.tol:.1e}")
    for msg in failures:
        print("check_exits: FAIL " + msg, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
