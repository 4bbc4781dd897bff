#!/usr/bin/python3
"""Eigenvalues of the linearised game K written by bench_mfg_spectrum.

    /usr/bin/python3 perf/mfg_spectrum.py [--modes] FILE:POINTS:STEPS [FILE:POINTS:STEPS ...]

FILE is written by bench_mfg_spectrum; POINTS is the points per time level (a 2D game of
N x N points: N^2). For each matrix: the range of the real parts, the largest imaginary
part, the largest eigenvalues by modulus and how many exceed 0.5, 0.1 and 0.01 in modulus
(the modes the undamped iteration U <- Psi(U) does not damp fast; the two-grid iteration
corrects them on a coarse grid, docs/design.md section 5).

--modes also forms the eigenvectors and prints where the modes live: the mean share of a
mode's energy on each time level, for the large (|lambda| > 0.5) and the small (< 0.1) ones,
and for a square 2D grid the share in the lowest Fourier modes (|k| <= 2 per axis, per level)
of the ten most negative, of the large and of the small ones."""
import sys

import numpy as np


def main(args):
    if not args:
        print(__doc__)
        return 2
    modes = "--modes" in args
    args = [a for a in args if a != "--modes"]
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
        if modes:
            where_modes(k, int(points), int(steps) + 1)
    return 0


def low_share(v, side):
    """Share of v's energy (levels x side x side) in the Fourier modes |k| <= 2 per axis."""
    f = np.abs(np.fft.fft2(v.reshape(v.shape[0], side, side))) ** 2
    low = [0, 1, 2, side - 2, side - 1]
    return f[:, low][:, :, low].sum() / f.sum()


def where_modes(k, points, levels):
    ev, vec = np.linalg.eig(k)
    ev, vec = ev.real, vec.real
    large = np.abs(ev) > 0.5
    small = np.abs(ev) < 0.1
    energy = (vec.reshape(levels, points, -1) ** 2).sum(axis=1)  # levels x modes
    energy /= energy.sum(axis=0)
    fmt = lambda a: " ".join(f"{x:.3f}" for x in a)
    print(f"  energy per time level, large modes: {fmt(energy[:, large].mean(axis=1))}")
    print(f"  energy per time level, small modes: {fmt(energy[:, small].mean(axis=1))}")
    side = int(round(points ** 0.5))
    if side * side == points and side > 4:
        shares = np.array([low_share(vec[:, j].reshape(levels, points), side)
                           for j in range(len(ev))])
        most = np.argsort(ev)[:10]
        print(f"  low-frequency share: ten most negative {shares[most].mean():.3f}, "
              f"large {shares[large].mean():.3f}, small {shares[small].mean():.3f}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
