#!/usr/bin/python3
"""Eigenvalues of the linearised game K written by bench_mfg_spectrum.

    /usr/bin/python3 perf/mfg_spectrum.py FILE:POINTS:STEPS [FILE:POINTS:STEPS ...]

FILE is written by bench_mfg_spectrum; POINTS is the points per time level (a 2D game of
N x N points: N^2). For each matrix: the range of the real parts, the largest imaginary
part, the largest eigenvalues by modulus and how many exceed 0.5, 0.1 and 0.01 in modulus
(the modes the undamped iteration U <- Psi(U) does not damp fast; the two-grid iteration
corrects them on a coarse grid, docs/design.md section 5)."""
import sys

import numpy as np


def main(args):
    if not args:
        print(__doc__)
        return 2
    for arg in args:
        path, points, steps = arg.split(":")
        n = int(points) * (int(steps) + 1)
        k = np.fromfile(path).reshape(n, n)
        ev = np.linalg.eigvals(k)
        mod = np.abs(ev)
        order = np.argsort(-mod)
        print(f"{points} points x {steps} steps ({n} unknowns): real parts in "
              f"[{ev.real.min():.3f}, {ev.real.max():.3f}], max |imag| {np.abs(ev.imag).max():.2e}")
        print("  largest: " + ", ".join(f"{ev[i].real:.3f}" for i in order[:8]))
        print(f"  |lambda| > 0.5: {(mod > 0.5).sum()}, > 0.1: {(mod > 0.1).sum()}, "
              f"> 0.01: {(mod > 0.01).sum()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
