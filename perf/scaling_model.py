#!/usr/bin/env python3
"""Communication counts per outer iteration (MFG) or time step (FPDE), a latency-bandwidth
model fitted to them, its check against 1-3 ranks here and its weak-scaling prediction for
two interconnects (docs/performance.md, "Scaling beyond one node: a communication model").

    perf/scaling_model.py --build build              # measure, then print the tables
    perf/scaling_model.py --build build --json f     # also keep the raw figures
    perf/scaling_model.py --from-json f              # recompute the tables from them

Run through perf/scaling_model.sh. Standard library only (any python3).

What is measured, for each case at 1, 2 and 3 ranks and two grid sizes:
  * PETSc's -log_view: messages, bytes and reductions, total and per event (KSPSolve,
    MatMult, PCApply, ...), flops and Krylov iterations;
  * Open MPI's monitoring components (--mca pml_monitoring_enable 2): point-to-point
    messages that PETSc does not log (hypre's, the code's own) and the messages sent inside
    collectives. The pml monitor does not see persistent requests (MPI_Start), which is how
    PETSc's VecScatter/PetscSF sends its halos: those are counted by PETSc's log instead, so
    the two sources add up without counting a message twice;
  * the collectives PETSc's log misses, counted from the source (unlogged_collectives below)
    and measured as the collective messages on 2 ranks (one per collective there) less
    PETSc's reductions.
Every count is the difference of two runs that differ only in the number of outer
iterations (bench_mfg -max_it) or steps (fracmfg run -- -fpde_stop_at), divided by that
difference: set-up, output and the checkpoint cancel.
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)

# Interconnects of the prediction: (name, alpha [s], beta [bytes/s]).
NETWORKS = [
    ("HDR InfiniBand (200 Gb/s)", 1.5e-6, 12.5e9),
    ("25 GbE (TCP)", 15e-6, 3.0e9),
]
WEAK_RANKS = [64, 256, 1000]

# Cases: how to run them, the sizes, and the two iteration/step counts differenced.
MFG_STEPS = 20
CASES = {
    "mfg2d": {"title": "2D MFG (bench_mfg -problem crowd2d, 20 time steps)",
              "sizes": [64, 128], "k": (2, 4), "unit": "outer iteration"},
    "fpde1d": {"title": "FPDE 1D (time-fractional, tridiagonal solve)",
               "sizes": [20000, 200000], "k": (4, 36), "unit": "step"},
    "fpde2d": {"title": "FPDE 2D (time-fractional, CG + BoomerAMG)",
               "sizes": [129, 257], "k": (4, 36), "unit": "step"},
}


def unlogged_collectives(case):
    """Collectives per outer iteration / step that PETSc's log does not count, from the
    source. PETSc's petsclog.h wraps MPI_Allreduce, MPI_Bcast and MPI_Allgather in every file
    that includes PETSc's headers, so the code's own reductions there are in "MPI
    Reductions" (solver.cpp's check_density per time level, the changes and the time of an
    outer iteration; the fracmfg_tridiag preconditioner's MPI_Allreduce and two
    MPI_Allgather; fpde_solver.cpp's norms). Files that include only mpi.h are not:
      mfg2d:  core::stop_requested (src/core/interrupt.cpp), once per outer iteration;
      fpde1d, fpde2d: core::stop_requested and check_finite's core::collective
              (src/core/guarded_main.cpp), once each per step.
    hypre's collectives inside BoomerAMG are not logged either; the monitor counts them (the
    measured figure, collective messages on 2 ranks less PETSc's reductions, includes them)."""
    return {"mfg2d": 1, "fpde1d": 2, "fpde2d": 2}[case]


# Block Jacobi sweep: Krylov iterations per outer iteration of the 2D MFG on one rank with
# B blocks (strips of rows), the algorithmic side of adding ranks.
SWEEP_SIZE = 128
SWEEP_BLOCKS = [1, 4, 16, 64]


# ----------------------------------------------------------------------------------------
# Running

def mpiexec_base(p):
    cmd = ["mpiexec", "-n", str(p)]
    out = subprocess.run(["mpiexec", "--version"], capture_output=True, text=True).stdout
    if "Open MPI" in out or "OpenRTE" in out:
        cmd += ["--oversubscribe", "--bind-to", "none"]
        if os.geteuid() == 0:
            cmd += ["--allow-run-as-root"]
    return cmd


def monitoring_args(prefix):
    return ["--mca", "pml_monitoring_enable", "2", "--mca", "pml_monitoring_enable_output", "3",
            "--mca", "pml_monitoring_filename", prefix]


def fpde_deck(work, case, size, steps):
    """A copy of the example deck, enlarged, with output only at the end."""
    if case == "fpde1d":
        src = os.path.join(TOP, "inputs", "fpde_subdiffusion_1d.yaml")
        subs = [(r"points: \[400\]", f"points: [{size}]"), (r"steps: 400,", f"steps: {steps},"),
                (r"every: 20, checkpoint_every: 100", "every: 100000")]
    else:
        src = os.path.join(TOP, "inputs", "fpde_subdiffusion_2d.yaml")
        subs = [(r"points: \[129, 129\]", f"points: [{size}, {size}]"),
                (r"steps: 200,", f"steps: {steps},"),
                (r"every: 10, checkpoint_every: 50", "every: 100000")]
    text = open(src).read()
    for a, b in subs:
        text, n = re.subn(a, b, text)
        if n != 1:
            sys.exit(f"scaling_model.py: {src} no longer matches '{a}'")
    path = os.path.join(work, f"{case}_{size}.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def run_once(build, work, case, size, p, k, reps, tag, extra=()):
    """One run: returns the solver's time and the two count sources."""
    lv = os.path.join(work, f"lv_{tag}.txt")
    mon = os.path.join(work, f"mon_{tag}")
    for f in os.listdir(work):
        if f.startswith(f"mon_{tag}."):
            os.remove(os.path.join(work, f))
    base = mpiexec_base(p) + monitoring_args(mon)
    if case == "mfg2d":
        cmd = base + [os.path.join(build, "perf", "bench_mfg"), "-problem", "crowd2d",
                      "-points", str(size), "-steps", str(MFG_STEPS), "-tol", "1e-30",
                      "-damping", "0.3", "-max_it", str(k), "-reps", str(reps),
                      "-log_view", ":" + lv] + list(extra)
    else:
        deck = fpde_deck(work, case, size, 40)
        cmd = base + [os.path.join(build, "bin", "fracmfg"), "run", deck, "--",
                      "-fpde_stop_at", str(k), "-log_view", ":" + lv]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
    if res.returncode != 0:
        sys.exit("scaling_model.py: failed: " + " ".join(cmd) + "\n" + res.stdout + res.stderr)
    out = res.stdout + res.stderr
    if case == "mfg2d":
        m = re.search(r"solve ([0-9.eE+-]+) s", out)
        seconds = float(m.group(1))  # the minimum over -reps solves
        m = re.search(r"after (\d+) iterations", out)
        if m and int(m.group(1)) != k:
            sys.exit(f"scaling_model.py: expected {k} iterations, got {m.group(1)}")
    else:
        m = re.search(r"steps 0\.\.(\d+) in ([0-9.eE+-]+) s.*?(\d+) linear iterations", out)
        if not m or int(m.group(1)) != k:
            sys.exit("scaling_model.py: no step summary in\n" + out)
        seconds = float(m.group(2))
    return {"seconds": seconds, "petsc": parse_log_view(lv), "mon": parse_monitoring(mon, p)}


def parse_log_view(path):
    text = open(path).read()

    def header(name):
        line = next(x for x in text.splitlines() if x.startswith(name + ":"))
        return [float(x) for x in line.split(":", 1)[1].split()]

    msg = header("MPI Msg Count")       # max per rank, ratio, avg per rank, total
    length = header("MPI Msg Len (bytes)")  # max per rank, ratio, avg length, total
    red = header("MPI Reductions")      # per rank, ratio
    flops = header("Flops")             # max per rank, ratio, avg, total
    events = {}
    stage = text.split("--- Event Stage 0: Main Stage", 1)[1].split("--- Event Stage 1", 1)[0]
    for line in stage.splitlines():
        f = line.split()
        if len(f) >= 11 and re.match(r"^[A-Za-z]", line):
            try:
                events[f[0]] = {"count": float(f[1]), "time": float(f[3]),
                                "mess": float(f[7]), "avglen": float(f[8]),
                                "reduct": float(f[9])}
            except ValueError:
                pass
    return {"msg_max": msg[0], "msg_total": msg[-1], "bytes_max": length[0],
            "bytes_total": length[-1], "reductions": red[0], "flops_max": flops[0],
            "events": events}


def parse_monitoring(prefix, p):
    """Per rank: point-to-point messages and bytes sent to other ranks outside collectives
    (E lines; not persistent requests), and messages sent inside collectives (C lines)."""
    ranks = []
    for r in range(p):
        path = f"{prefix}.{r}.prof"
        e_msgs = e_bytes = c_msgs = c_bytes = 0
        if os.path.exists(path):
            for line in open(path):
                f = line.split("\t")
                if f[0] in ("E", "C") and f[1] != f[2]:
                    b = int(f[3].split()[0])
                    n = int(f[4].split()[0])
                    if f[0] == "E":
                        e_msgs, e_bytes = e_msgs + n, e_bytes + b
                    else:
                        c_msgs, c_bytes = c_msgs + n, c_bytes + b
        ranks.append({"e_msgs": e_msgs, "e_bytes": e_bytes, "c_msgs": c_msgs, "c_bytes": c_bytes})
    return ranks


def measure(build, work, repeats):
    data = {}
    for case, spec in CASES.items():
        for size in spec["sizes"]:
            for p in (1, 2, 3):
                k1, k2 = spec["k"]
                reps = repeats if case == "mfg2d" else 1
                # bench_mfg times -reps solves itself; the driver's runs are repeated here.
                # The counts are those of the first pair, the time the minimum of each.
                runs = {}
                for _ in range(1 if case == "mfg2d" else repeats):
                    for k in (k1, k2):
                        r = run_once(build, work, case, size, p, k, reps, f"{case}_{size}_{p}_{k}")
                        if k in runs:
                            runs[k]["seconds"] = min(runs[k]["seconds"], r["seconds"])
                        else:
                            runs[k] = r
                per = per_unit(runs[k1], runs[k2], (k2 - k1) * reps, reps)
                per.update({"case": case, "size": size, "p": p})
                data[f"{case}/{size}/{p}"] = per
                print(f"# {case} {size} p={p}: {per['seconds']:.4g} s per {spec['unit']}, "
                      f"{per['msgs_max']:.1f} msgs/rank, {per['reductions']:.1f} PETSc "
                      f"reductions, {per['mon_c_msgs']:.1f} collective messages",
                      file=sys.stderr)
    # Collectives PETSc does not log: on 2 ranks every collective sends one message per rank
    # (MPI_Bcast: from the root), so the monitor's count less PETSc's is what PETSc misses.
    for key, r in data.items():
        two = data[f"{r['case']}/{r['size']}/2"]
        r["unlogged_coll"] = max(two["mon_c_msgs"] - two["reductions"], 0.0) if r["p"] > 1 else 0
    return data


def sweep(build, work):
    """Krylov iterations (operator applications) per outer iteration with B blocks."""
    out = []
    for b in SWEEP_BLOCKS:
        extra = ["-mfg_hjb_pc_bjacobi_blocks", str(b), "-mfg_fp_pc_bjacobi_blocks", str(b)]
        runs = [run_once(build, work, "mfg2d", SWEEP_SIZE, 1, k, 1, f"sweep_{b}_{k}", extra)
                for k in (2, 4)]
        per = per_unit(runs[0], runs[1], 2, 1)
        out.append({"blocks": b, "ksp_its": per["ksp_its"], "seconds": per["seconds"]})
        print(f"# sweep B={b}: {per['ksp_its']:.0f} operator applications per iteration",
              file=sys.stderr)
    return out


def per_unit(a, b, units, reps):
    """Counts and time per outer iteration / step from two runs (b has more of them)."""
    pa, pb = a["petsc"], b["petsc"]

    def d(key):
        return (pb[key] - pa[key]) / units

    def ev(name, key):
        ea, eb = pa["events"].get(name, {}), pb["events"].get(name, {})
        return (eb.get(key, 0.0) - ea.get(key, 0.0)) / units

    e_msgs = max((mb["e_msgs"] - ma["e_msgs"]) / units for ma, mb in zip(a["mon"], b["mon"]))
    e_bytes = max((mb["e_bytes"] - ma["e_bytes"]) / units for ma, mb in zip(a["mon"], b["mon"]))
    c_msgs = max((mb["c_msgs"] - ma["c_msgs"]) / units for ma, mb in zip(a["mon"], b["mon"]))
    out = {
        # time per unit: the runs' times are per solve (the minimum over -reps solves)
        "seconds": (b["seconds"] - a["seconds"]) / (units / reps),
        "msgs_max": d("msg_max"), "msgs_total": d("msg_total"),
        "bytes_max": d("bytes_max"), "bytes_total": d("bytes_total"),
        "reductions": d("reductions"), "flops_max": d("flops_max"),
        # Krylov iterations: operator applications (one more per solve than iterations)
        "ksp_its": ev("MatMult", "count"),
        "ksp_solves": ev("KSPSolve", "count"), "ksp_time": ev("KSPSolve", "time"),
        "matmult_mess": ev("MatMult", "mess"), "pcapply_mess": ev("PCApply", "mess"),
        "mon_e_msgs": e_msgs, "mon_e_bytes": e_bytes, "mon_c_msgs": c_msgs,
    }
    return out


# ----------------------------------------------------------------------------------------
# Transport of this machine

def pingpong(work):
    exe = os.path.join(work, "pingpong")
    mpicc = shutil.which("mpicc") or "mpicc"
    subprocess.run([mpicc, "-O2", os.path.join(HERE, "scaling_pingpong.c"), "-o", exe], check=True)
    pts, allred = [], {}
    for p in (2, 3):
        out = subprocess.run(mpiexec_base(p) + [exe], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if f[0] == "pingpong":
                pts.append((int(f[1]), float(f[2])))
            elif f[0] == "allreduce":
                allred[int(f[1])] = float(f[2])
    return {"pingpong": pts, "allreduce": allred}


def fit_transport(tr):
    """alpha: half round trip of 8 or 64 bytes; beta: the best s / (t - alpha) over the
    messages of 32 KiB and more."""
    pts = tr["pingpong"]
    alpha = min(t for s, t in pts if s <= 64)
    # Load only slows a transfer down: the fastest large transfer gives the bandwidth.
    beta = max(s / (t - alpha) for s, t in pts if s >= 32768 and t > alpha)
    return alpha, beta


# ----------------------------------------------------------------------------------------
# The model

def comm_time(msgs, nbytes, colls, p, alpha, beta):
    """sum over a rank's messages of (alpha + bytes/beta), plus alpha ceil(log2 p) per
    collective."""
    lg = math.ceil(math.log2(p)) if p > 1 else 0
    return msgs * alpha + nbytes / beta + colls * alpha * lg


def check_table(data, alpha, beta, cores):
    """Predicted against measured time per unit at 1, 2 and 3 ranks; compute from 1 rank.

    compute(p) = T(1) [(1 - s) + s K(p)/K(1)] / min(p, cores): s is KSPSolve's share of T(1),
    K the operator applications (block Jacobi needs more as the blocks shrink), and p ranks
    get min(p, cores) cores. communication(p) = the model's sum over the counts at p."""
    rows = []
    for case, spec in CASES.items():
        for size in spec["sizes"]:
            one = data[f"{case}/{size}/1"]
            for p in (1, 2, 3):
                r = data[f"{case}/{size}/{p}"]
                ksp_share = min(one["ksp_time"] / one["seconds"], 1.0) if one["seconds"] else 0
                growth = (r["ksp_its"] / one["ksp_its"]) if one["ksp_its"] else 1.0
                comp = one["seconds"] / min(p, cores) * ((1 - ksp_share) + ksp_share * growth)
                msgs = r["msgs_max"] + r["mon_e_msgs"]
                nbytes = r["bytes_max"] + r["mon_e_bytes"]
                colls = r["reductions"] + r["unlogged_coll"]
                comm = comm_time(msgs, nbytes, colls, p, alpha, beta)
                events = msgs + colls
                excess = (r["seconds"] - comp - comm) / events if events else 0.0
                rows.append({"case": case, "size": size, "p": p, "measured": r["seconds"],
                             "compute": comp, "comm": comm, "predicted": comp + comm,
                             "msgs": msgs, "bytes": nbytes, "colls": colls,
                             "growth": growth, "excess": excess})
    return rows


def krylov_exponent(blocks):
    """gamma of K(B) = K(1) B^gamma, least squares in log-log over 1..16 blocks (64 strips
    of two grid rows each are a degenerate partition, left out)."""
    pts = [(math.log(r["blocks"]), math.log(r["ksp_its"] / blocks[0]["ksp_its"]))
           for r in blocks if 1 < r["blocks"] <= 16 and r["ksp_its"] > 0]
    if not pts:
        return None
    return sum(x * y for x, y in pts) / sum(x * x for x, _ in pts)


# Reduced system of the distributed tridiagonal solve: 2 rows per rank, solved redundantly on
# every rank; factor and solve are each a Thomas sweep pair, REDUCED_ROW_SECONDS per row and
# sweep: the per-row cost of the 1D game's tridiagonal solves (docs/performance.md, "Where the
# time goes").
REDUCED_ROW_SECONDS = 5e-9


def weak_table(data, gamma):
    """Weak scaling at the larger grid's points per rank (T(1) measured on 1 rank).

    Per outer iteration / step and rank at P ranks:
      2D (a square block per rank): every halo exchange (PETSc's messages per rank on 2
        ranks, one neighbour there) becomes 4 messages (the star stencil's side neighbours)
        of the same size (a side of the block is as long as the 2-rank interface);
        point-to-point messages outside PETSc's log (hypre's) likewise, times 4 (a lower
        bound: coarse AMG levels have more neighbours); collectives (PETSc's reductions and
        the unlogged ones, on 2 ranks) at alpha ceil(log2 P) each;
      1D (fpde1d): the collectives likewise, plus the two MPI_Allgather's bytes, (P - 1)
        (15 + 2) doubles, and the reduced system of 2P rows solved on every rank (O(P)).
    eff is T(1) / (T(1) + comm) with the Krylov counts of 1 rank. eff_k lets the Krylov
    count grow by g = P^gamma (block Jacobi's growth with the number of blocks, measured on
    one rank; 2D MFG only): T(P) = T(1) [(1 - s) + s g] + g comm, s the Krylov solves' share
    of T(1) (nearly all the messages and reductions are the Krylov iterations')."""
    rows = []
    for case in ("mfg2d", "fpde2d", "fpde1d"):
        size = CASES[case]["sizes"][-1]
        one, two = data[f"{case}/{size}/1"], data[f"{case}/{size}/2"]
        t1 = one["seconds"]
        halo_events = two["msgs_max"]
        halo_bytes_each = two["bytes_max"] / max(two["msgs_max"], 1.0)
        colls = two["reductions"] + two["unlogged_coll"]
        for name, alpha, beta in NETWORKS:
            for P in WEAK_RANKS:
                if case == "fpde1d":
                    msgs, nbytes = 0.0, (P - 1) * 17 * 8.0
                    extra = 4 * 2 * P * REDUCED_ROW_SECONDS
                else:
                    msgs = 4 * (halo_events + two["mon_e_msgs"])
                    nbytes = 4 * (halo_events * halo_bytes_each + two["mon_e_bytes"])
                    extra = 0.0
                comm = comm_time(msgs, nbytes, colls, P, alpha, beta) + extra
                eff = t1 / (t1 + comm)
                growth = P ** gamma if (gamma is not None and case == "mfg2d") else None
                share = min(one["ksp_time"] / t1, 1.0) if t1 else 0.0
                eff_k = (t1 / (t1 * ((1 - share) + share * growth) + growth * comm)
                         if growth else None)
                rows.append({"case": case, "size": size, "network": name, "P": P, "t1": t1,
                             "comm": comm, "eff": eff, "eff_k": eff_k, "growth": growth,
                             "latency": msgs * alpha + colls * alpha * math.ceil(math.log2(P)),
                             "bandwidth": nbytes / beta, "extra": extra, "msgs": msgs,
                             "bytes": nbytes, "colls": colls})
    return rows


# ----------------------------------------------------------------------------------------
# Output

def fmt(x, digits=3):
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def print_tables(data, transport, blocks, cores):
    alpha, beta = fit_transport(transport)
    gamma = krylov_exponent(blocks) if blocks else None
    print(f"## Transport here (Open MPI vader, shared memory): alpha = {alpha * 1e6:.2f} us, "
          f"beta = {beta / 1e9:.1f} GB/s; MPI_Allreduce of one double: "
          + ", ".join(f"{p} ranks {t * 1e6:.2f} us"
                      for p, t in sorted(transport["allreduce"].items())))
    print("pingpong (bytes: half round trip): "
          + ", ".join(f"{s}: {t * 1e6:.2f} us" for s, t in transport["pingpong"]))
    print()
    print("## Counts per outer iteration (MFG) / step (FPDE), per rank (max over ranks)")
    print()
    print("| case | size | ranks | time [s] | PETSc msgs | PETSc bytes | PETSc reductions | "
          "other p2p msgs / bytes (monitor) | coll. msgs (monitor) | unlogged coll. measured "
          "/ from the code | operator applications |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for key, r in data.items():
        code = unlogged_collectives(r["case"]) if r["p"] > 1 else 0
        print(f"| {r['case']} | {r['size']} | {r['p']} | {fmt(r['seconds'])} | "
              f"{fmt(r['msgs_max'])} | {fmt(r['bytes_max'])} | {fmt(r['reductions'])} | "
              f"{fmt(r['mon_e_msgs'])} / {fmt(r['mon_e_bytes'])} | {fmt(r['mon_c_msgs'])} | "
              f"{fmt(r['unlogged_coll'])} / {code} | {fmt(r['ksp_its'])} |")
    print()
    print("## Model against measurement (time per outer iteration / step)")
    print()
    print(f"({cores} cores: p ranks compute on min(p, {cores}) of them)")
    print()
    print("| case | size | ranks | Krylov growth | compute [s] | communication [s] | predicted [s] "
          "| measured [s] | measured / predicted | excess per message or collective [us] |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in check_table(data, alpha, beta, cores):
        excess = f"{r['excess'] * 1e6:.1f}" if r["p"] > 1 else ""
        print(f"| {r['case']} | {r['size']} | {r['p']} | {r['growth']:.2f} | {fmt(r['compute'])} | "
              f"{fmt(r['comm'])} | {fmt(r['predicted'])} | {fmt(r['measured'])} | "
              f"{r['measured'] / r['predicted']:.2f} | {excess} |")
    print()
    print("## Weak scaling, predicted (points per rank of the larger grid)")
    print()
    points = {"mfg2d": lambda n: n * n * MFG_STEPS, "fpde1d": lambda n: n,
              "fpde2d": lambda n: n * n}
    per_point = [(case, size, data[f"{case}/{size}/1"]["seconds"] / points[case](size))
                 for case, spec in CASES.items() for size in spec["sizes"]]
    print("Compute per point and outer iteration / step on one rank, c = T(1) / n: "
          + "; ".join(f"{case} {size}: {c * 1e9:.0f} ns" for case, size, c in per_point))
    print()
    if gamma is not None:
        share = {c: data[f"{c}/{CASES[c]['sizes'][-1]}/1"] for c in ("mfg2d",)}
        s = share["mfg2d"]["ksp_time"] / share["mfg2d"]["seconds"]
        print(f"Block Jacobi's Krylov count grows like B^{gamma:.3f} (one rank, 1..16 blocks); "
              f"'with growth' lets it grow like P^{gamma:.3f} at P ranks (Krylov solves "
              f"{100 * s:.0f} % of T(1)).")
        print()
    print("| case | points per rank | network | ranks | T(1) [s] | latency [s] | bandwidth [s] "
          "| reduced system [s] | efficiency, Krylov counts fixed | with growth |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in weak_table(data, gamma):
        pts = {"mfg2d": f"{r['size']}^2 x {MFG_STEPS}", "fpde2d": f"{r['size']}^2",
               "fpde1d": f"{r['size']}"}[r["case"]]
        eff_k = f"{r['eff_k']:.3f}" if r["eff_k"] is not None else ""
        print(f"| {r['case']} | {pts} | {r['network']} | {r['P']} | {fmt(r['t1'])} | "
              f"{fmt(r['latency'])} | {fmt(r['bandwidth'])} | {fmt(r['extra'])} | "
              f"{r['eff']:.3f} | {eff_k} |")
    if blocks:
        print()
        print(f"## Block Jacobi: 2D MFG {SWEEP_SIZE}^2 x {MFG_STEPS} on one rank, B blocks")
        print()
        print("| blocks | operator applications per outer iteration | ratio to 1 block | "
              "time per outer iteration [s] |")
        print("|---|---|---|---|")
        for r in blocks:
            print(f"| {r['blocks']} | {fmt(r['ksp_its'])} | "
                  f"{r['ksp_its'] / blocks[0]['ksp_its']:.2f} | {fmt(r['seconds'])} |")


def self_test():
    """The parsers, the differencing and the model's arithmetic on made-up inputs."""
    work = tempfile.mkdtemp(prefix="scaling_model_test.")
    try:
        def log_view(path, msgs, nbytes, red, matmult):
            with open(path, "w") as f:
                f.write("                         Max       Max/Min     Avg       Total\n"
                        f"Flops:                1.000e+06     1.000   1.000e+06  2.000e+06\n"
                        f"MPI Msg Count:        {msgs:.3e}     1.000   {msgs:.3e}  {2 * msgs:.3e}\n"
                        f"MPI Msg Len (bytes):  {nbytes:.3e}     1.000   8.000e+00  "
                        f"{2 * nbytes:.3e}\n"
                        f"MPI Reductions:       {red:.3e}     1.000\n"
                        "--- Event Stage 0: Main Stage\n\n"
                        f"MatMult             {matmult} 1.0 4.4864e-02 1.5 2.16e+07 1.0 2.4e+03 "
                        "5.1e+02 "
                        "2.0e+00 21 13 76 69  0  21 13 76 69  0   963\n"
                        "KSPSolve              10 1.0 1.0000e-01 1.0 1.45e+08 1.0 2.4e+03 5.1e+02 "
                        "2.6e+03 68 86 76 69 78  68 86 76 69 78  2315\n"
                        "--- Event Stage 1: Unknown\n")

        def monitor(prefix, e, c):
            for r in (0, 1):
                with open(f"{prefix}.{r}.prof", "w") as f:
                    f.write("# POINT TO POINT\n"
                            f"E\t{r}\t{r}\t99 bytes\t9 msgs sent\t0,0\n"
                            f"E\t{r}\t{1 - r}\t{8 * e} bytes\t{e} msgs sent\t0,0\n"
                            f"I\t{r}\t{1 - r}\t{8 * c} bytes\t{c} msgs sent\n"
                            "# COLLECTIVES\n"
                            f"C\t{r}\t{1 - r}\t{8 * c} bytes\t{c} msgs sent\n")

        runs = []
        for k, (msgs, red, mm, e, c) in enumerate([(100, 50, 30, 7, 60), (300, 130, 90, 27, 160)]):
            log_view(os.path.join(work, f"lv{k}"), msgs, 8 * msgs, red, mm)
            monitor(os.path.join(work, f"m{k}"), e, c)
            runs.append({"seconds": 1.0 + 2.0 * k,
                         "petsc": parse_log_view(os.path.join(work, f"lv{k}")),
                         "mon": parse_monitoring(os.path.join(work, f"m{k}"), 2)})
        assert runs[0]["petsc"]["msg_max"] == 100 and runs[0]["petsc"]["msg_total"] == 200
        assert runs[0]["petsc"]["reductions"] == 50 and runs[0]["petsc"]["flops_max"] == 1e6
        assert runs[0]["petsc"]["events"]["MatMult"]["count"] == 30
        assert runs[0]["mon"][1] == {"e_msgs": 7, "e_bytes": 56, "c_msgs": 60, "c_bytes": 480}
        per = per_unit(runs[0], runs[1], 4, 2)  # 2 more iterations, 2 solves each
        assert per["msgs_max"] == 50 and per["bytes_max"] == 400 and per["reductions"] == 20
        assert per["mon_e_msgs"] == 5 and per["mon_c_msgs"] == 25 and per["ksp_its"] == 15
        assert abs(per["seconds"] - 1.0) < 1e-12
        assert comm_time(10, 1e6, 4, 1, 1e-6, 1e9) == 10e-6 + 1e-3
        assert abs(comm_time(0, 0, 4, 1000, 1e-6, 1e9) - 40e-6) < 1e-15
        alpha, beta = fit_transport({"pingpong": [(8, 1e-6), (65536, 1e-6 + 65536 / 2e9),
                                                  (1 << 20, 1e-6 + 2 * (1 << 20) / 2e9)]})
        assert alpha == 1e-6 and abs(beta - 2e9) < 1
        print("scaling_model.py: self-test passed")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--work", help="work directory (default: a temporary one, removed)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="timings per configuration (the minimum is used)")
    ap.add_argument("--quick", action="store_true", help="the smaller grid of each case only")
    ap.add_argument("--json", help="write the measured figures here")
    ap.add_argument("--from-json", help="recompute the tables from a --json file")
    ap.add_argument("--self-test", action="store_true", help="check the parsers and the model")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return
    if a.from_json:
        saved = json.load(open(a.from_json))
        print_tables(saved["data"], saved["transport"], saved.get("blocks", []),
                     saved.get("cores", os.cpu_count()))
        return
    build = os.path.abspath(a.build)
    for exe in ("perf/bench_mfg", "bin/fracmfg"):
        if not os.access(os.path.join(build, exe), os.X_OK):
            sys.exit(f"scaling_model.py: {build}/{exe} not found; build it with "
                     f"scripts/build --target bench_mfg --target fracmfg_driver")
    if a.quick:
        for spec in CASES.values():
            spec["sizes"] = spec["sizes"][:1]
    work = a.work or tempfile.mkdtemp(prefix="scaling_model.")
    os.makedirs(os.path.join(work, "results"), exist_ok=True)
    try:
        print(f"# load average at the start: {open('/proc/loadavg').read().split()[:3]}")
        transport = pingpong(work)
        data = measure(build, work, a.repeats)
        blocks = [] if a.quick else sweep(build, work)
        print(f"# load average at the end: {open('/proc/loadavg').read().split()[:3]}")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"data": data, "transport": transport, "blocks": blocks,
                           "cores": os.cpu_count()}, f, indent=1)
        print_tables(data, transport, blocks, os.cpu_count())
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
