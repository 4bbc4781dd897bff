#!/usr/bin/python3
"""Eigenvalues of the linearised game K written by bench_mfg_spectrum.

    /usr/bin/python3 perf/mfg_spectrum.py [--modes] [--coarse] FILE:POINTS:STEPS [...]

FILE is written by bench_mfg_spectrum; POINTS is the points per time level (a 2D game of
N x N points: N^2). For each matrix: the range of the real parts, the largest imaginary
part, the largest eigenvalues by modulus and how many exceed 0.5, 0.1 and 0.01 in modulus
(the modes the undamped iteration U <- Psi(U) does not damp fast; the two-grid iteration
corrects them on a coarse grid, docs/design.md section 5).

--modes also forms the eigenvectors and prints where the modes live: the mean share of a
mode's energy on each time level, for the large (|lambda| > 0.5) and the small (< 0.1) ones,
and for a square 2D grid the share in the lowest Fourier modes (|k| <= 2 per axis, per level)
of the ten most negative, of the large and of the small ones.

--coarse (a square 2D grid) asks which coarser grid could represent the modes that bound the
damped fixed point's damping (theta* = 2 / (1 + sqrt(1 - a_min))): for the eigenvectors in
bands of the eigenvalue a, the mean share of a mode's energy that a coarse grid misses,
||v - P R v||^2 / ||v||^2, with R, P: every f-th time level kept and linear interpolation in
time between them (time/f), the mean of f x f cells and bilinear interpolation between the
coarse cell centres (space/f), and both."""
import sys

import numpy as np


def main(args):
    if not args:
        print(__doc__)
        return 2
    modes = "--modes" in args
    coarse = "--coarse" in args
    args = [a for a in args if a not in ("--modes", "--coarse")]
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
        if coarse:
            coarse_residuals(k, int(points), int(steps) + 1)
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


def time_projection(levels, f):
    """V (levels x points) -> every f-th level kept, linear in time between them."""
    kept = list(range(0, levels, f))
    if kept[-1] != levels - 1:
        kept.append(levels - 1)

    def project(v):
        w = np.empty_like(v)
        for l in range(levels):
            j = min(np.searchsorted(kept, l, side="right") - 1, len(kept) - 2)
            t = (l - kept[j]) / (kept[j + 1] - kept[j])
            w[l] = (1.0 - t) * v[kept[j]] + t * v[kept[j + 1]]
        return w
    return project


def space_projection(side, f):
    """V (levels x side^2) -> means of f x f cells, bilinear between the coarse centres."""
    m = side // f
    centres = (np.arange(m) + 0.5) * f - 0.5  # in fine cell indices
    w = np.zeros((side, m))
    for i in range(side):
        j = int(np.clip(np.searchsorted(centres, i) - 1, 0, m - 2))
        t = float(np.clip((i - centres[j]) / (centres[j + 1] - centres[j]), 0.0, 1.0))
        w[i, j] += 1.0 - t
        w[i, j + 1] += t

    def project(v):
        c = v.reshape(v.shape[0], m, f, m, f).mean(axis=(2, 4))
        return np.einsum("ia,lab,jb->lij", w, c, w).reshape(v.shape)
    return project


def coarse_residuals(k, points, levels):
    side = int(round(points ** 0.5))
    if side * side != points or side % 4 != 0:
        print("  --coarse needs a square 2D grid with a multiple of 4 points per axis")
        return
    ev, vec = np.linalg.eig(k)
    ev, vec = ev.real, vec.real
    t2, t4 = time_projection(levels, 2), time_projection(levels, 4)
    s2, s4 = space_projection(side, 2), space_projection(side, 4)
    grids = {"time/2": t2, "time/4": t4, "space/2": s2, "space/4": s4,
             "space/2 time/2": lambda v: s2(t2(v))}
    bands = [("a < -8", ev < -8), ("-8 < a < -4", (ev >= -8) & (ev < -4)),
             ("-4 < a < -2", (ev >= -4) & (ev < -2)), ("-2 < a < -1", (ev >= -2) & (ev < -1)),
             ("-1 < a < -0.5", (ev >= -1) & (ev < -0.5))]
    print("  energy a coarse grid misses, by band of a:")
    print("  " + f"{'band':15s} {'modes':>5s}" + "".join(f"{g:>16s}" for g in grids))
    for name, mask in bands:
        idx = np.where(mask)[0]
        if len(idx) == 0:
            continue
        missed = {g: 0.0 for g in grids}
        for i in idx:
            v = (vec[:, i] / np.linalg.norm(vec[:, i])).reshape(levels, points)
            for g, project in grids.items():
                missed[g] += np.linalg.norm(v - project(v)) ** 2 / len(idx)
        print("  " + f"{name:15s} {len(idx):5d}" + "".join(f"{missed[g]:16.3f}" for g in grids))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
