#!/usr/bin/python3
"""Draws the figures of docs/performance.md from the data files in perf/data/.

    perf/plot_performance.py                         # every figure into docs/figures/
    perf/plot_performance.py --out /tmp/fig          # elsewhere
    perf/plot_performance.py --only mfg_games        # one figure
    perf/plot_performance.py --games bench.txt       # another input for one figure

Each figure has one input file, perf/data/<input>.csv by default: CSV with a header line,
'#' lines are comments (where and when the figures were measured). An input may also be
what the perf program prints, so that running the program and then this script redraws
the figure:

  figure               default input                  also accepts
  mfg_games            perf/data/mfg_games.csv        bench_mfg's output (--games)
  fractional_kernels   perf/data/fractional_benchmarks.csv
                                                      Google Benchmark CSV of bench_fpde and
                                                      bench_frac_convolution (--fractional)
  fode_history         perf/data/fode_history.csv     bench_fode's tables (--fode)
  gpu_crossover        perf/data/gpu_h200.csv         the report of scripts/gpu-check (--gpu)
  rank_scaling         perf/data/rank_scaling.csv     perf/scaling_model.sh --json (--scaling)

A malformed input is refused with its file and line (exit code 2). Debian's
/usr/bin/python3 with python3-matplotlib (Agg backend, no display needed).
"""
import argparse
import csv
import io
import json
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
DPI = 100


class InputError(Exception):
    """A malformed input: the message names the file and the line."""


# ----------------------------------------------------------------------------------------
# Reading

def read_csv(path, columns, numeric, text=None):
    """Rows of a CSV file as dicts. columns: the required header names; numeric: those that
    hold numbers (an empty field is None). Repeated header lines (concatenated outputs) and
    '#' lines are skipped."""
    if text is None:
        with open(path, newline="") as f:
            text = f.read()
    rows = []
    header = None
    for lineno, record in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not record or not "".join(record).strip() or record[0].lstrip().startswith("#"):
            continue
        if header is None:
            header = [h.strip() for h in record]
            missing = [c for c in columns if c not in header]
            if missing:
                raise InputError(f"{path}:{lineno}: the header lacks the column(s) "
                                 f"{', '.join(missing)} (it has {', '.join(header)})")
            continue
        fields = [h.strip() for h in record]
        if fields[0] == header[0] and all(c in fields for c in columns):
            header = fields  # the header of a concatenated output (its own extra columns)
            continue
        if len(record) != len(header):
            raise InputError(f"{path}:{lineno}: {len(record)} fields, the header has "
                             f"{len(header)} ({', '.join(header)})")
        row = {"_line": lineno}
        for name, value in zip(header, record):
            value = value.strip()
            if name in numeric:
                if value == "":
                    row[name] = None
                    continue
                try:
                    row[name] = float(value)
                except ValueError:
                    raise InputError(f"{path}:{lineno}: column {name}: '{value}' is not a "
                                     f"number") from None
                if not math.isfinite(row[name]):
                    raise InputError(f"{path}:{lineno}: column {name}: '{value}' is not finite")
            else:
                row[name] = value
        rows.append(row)
    if header is None:
        raise InputError(f"{path}:1: no header line (expected {', '.join(columns)})")
    if not rows:
        raise InputError(f"{path}: no data rows")
    return rows


def need(path, row, *names):
    """The row's values of names; an empty one is an error naming the line."""
    values = []
    for name in names:
        if row.get(name) is None:
            raise InputError(f"{path}:{row['_line']}: column {name} is empty")
        values.append(row[name])
    return values if len(values) > 1 else values[0]


GAMES_COLUMNS = ["problem", "points", "steps", "ranks", "method", "iterations", "solve_min"]


def read_games(path):
    """mfg_games.csv, or the output of bench_mfg (its two lines per solve):
    mfg crowd2d 128 x 128 x 50 steps, 2 rank(s), tol 1e-05, auto, ...: converged after 29
    iterations (GMRES 0)
      set-up 0.1 s (median 0.1), solve 8.56 s (median 8.80), per iteration ..."""
    with open(path, newline="") as f:
        text = f.read()
    if not re.search(r"^mfg \w+ ", text, re.M):
        return read_csv(path, GAMES_COLUMNS,
                        {"points", "steps", "ranks", "iterations", "solve_min", "solve_median"},
                        text)
    head = re.compile(r"^mfg (\w+) ((?:\d+ x )+)(\d+) steps, (\d+) rank\(s\), tol \S+, ([\w,]+), "
                      r".*after (\d+) iterations")
    solve = re.compile(r"solve ([0-9.eE+-]+) s \(median ([0-9.eE+-]+)\)")
    rows, pending = [], None
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = head.match(line)
        if m:
            if pending:
                raise InputError(f"{path}:{pending['_line']}: no 'solve' line follows")
            grid = [int(v) for v in m.group(2).split(" x ") if v.strip()]
            pending = {"_line": lineno, "problem": m.group(1), "points": float(grid[0]),
                       "steps": float(m.group(3)), "ranks": float(m.group(4)),
                       "method": m.group(5), "iterations": float(m.group(6))}
        elif line.startswith("mfg "):
            raise InputError(f"{path}:{lineno}: not a line of bench_mfg: {line[:60]}")
        elif pending and "solve" in line:
            s = solve.search(line)
            if not s:
                raise InputError(f"{path}:{lineno}: expected 'solve X s (median Y)'")
            pending["solve_min"], pending["solve_median"] = float(s.group(1)), float(s.group(2))
            rows.append(pending)
            pending = None
    if pending:
        raise InputError(f"{path}:{pending['_line']}: no 'solve' line follows")
    return rows


GB_COLUMNS = ["name", "real_time", "cpu_time", "time_unit"]
UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def read_benchmarks(path):
    """Google Benchmark CSV: (benchmark, argument) -> seconds, the benchmark's own measure
    (real time where the name ends in /real_time, else CPU time)."""
    rows = read_csv(path, GB_COLUMNS, {"real_time", "cpu_time"})
    out = {}
    for r in rows:
        parts = r["name"].split("/")
        if len(parts) < 2 or not parts[1].isdigit():
            raise InputError(f"{path}:{r['_line']}: benchmark name '{r['name']}' has no "
                             f"size argument (BM_Name/N)")
        if r["time_unit"] not in UNIT_SECONDS:
            raise InputError(f"{path}:{r['_line']}: time_unit '{r['time_unit']}' is not one of "
                             f"{', '.join(UNIT_SECONDS)}")
        real = parts[-1] == "real_time"
        value = r["real_time"] if real or r["cpu_time"] is None else r["cpu_time"]
        if value is None:
            raise InputError(f"{path}:{r['_line']}: no time given")
        out[(parts[0], int(parts[1]))] = value * UNIT_SECONDS[r["time_unit"]]
    return out


FODE_COLUMNS = ["table", "N", "setup", "solve", "direct", "nested", "graded", "graded_error",
                "uniform", "uniform_error"]


def read_fode(path):
    """fode_history.csv, or bench_fode's printed tables 1, 2 and 4."""
    with open(path) as f:
        text = f.read()
    if "Table 1:" not in text:
        return read_csv(path, FODE_COLUMNS, set(FODE_COLUMNS) - {"table"}, text)
    rows, table = [], None
    fields = {"1": ["N", "setup", "solve"], "2": ["N", "direct", "nested"],
              "4": ["N", "graded", "graded_error", "uniform", "uniform_error"]}
    uniform = re.compile(r"^uniform alone, N = 2\^(\d+): ([0-9.eE+-]+) s, max error ([0-9.eE+-]+)")
    for lineno, line in enumerate(text.splitlines(), start=1):
        t = re.match(r"^Table (\d+):", line)
        if t:
            table = t.group(1)
            continue
        u = uniform.match(line)
        if u:
            rows.append({"_line": lineno, "table": "uniform", "N": float(2 ** int(u.group(1))),
                         "uniform": float(u.group(2)), "uniform_error": float(u.group(3))})
            continue
        words = line.split()
        if table not in fields or not words or not words[0].isdigit() or "skipped" in line:
            continue
        names = fields[table]
        try:
            values = [float(w) for w in words[:len(names)]]
        except ValueError:
            raise InputError(f"{path}:{lineno}: a row of table {table} that is not numbers: "
                             f"{line.strip()[:60]}") from None
        if len(values) < len(names):
            raise InputError(f"{path}:{lineno}: table {table} needs {len(names)} values")
        row = {"_line": lineno, "table": table}
        row.update(zip(names, values))
        rows.append(row)
    if not rows:
        raise InputError(f"{path}: no rows of bench_fode's tables")
    return rows


GPU_COLUMNS = ["kernel", "cpu_throughput", "cuda_latency_us", "cuda_throughput", "crossover_n",
               "speedup_1e6", "best_speedup", "best_speedup_n"]


def parse_seconds(text, where):
    m = re.match(r"^([0-9.eE+-]+) (us|ms|s)$", text.strip())
    if not m:
        raise InputError(f"{where}: '{text}' is not a time (N us|ms|s)")
    return float(m.group(1)) * UNIT_SECONDS[m.group(2)]


def read_gpu(path):
    """gpu_h200.csv, or the Markdown report of scripts/gpu-check (its summary table and the
    per-kernel tables, from which the speed-up at n = 10^6 is taken)."""
    with open(path) as f:
        text = f.read()
    if not text.startswith("# fracmfg GPU check"):
        return read_csv(path, GPU_COLUMNS, set(GPU_COLUMNS) - {"kernel"}, text)
    rows, by_kernel, section = [], {}, None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        if not line.startswith("| ") or line.startswith("| kernel") or line.startswith("| n "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        where = f"{path}:{lineno}"
        if section == "Summary":
            if len(cells) != 7:
                raise InputError(f"{where}: a summary row needs 7 cells, has {len(cells)}")
            kernel, _, cpu_thr, cuda_lat, cuda_thr, cross, best = cells
            if cpu_thr == "-" or cuda_thr == "-":
                continue  # one backend only: no crossover to draw
            b = re.match(r"^([0-9.eE+-]+)x \(([0-9.eE+-]+)\)$", best)
            try:
                row = {"_line": lineno, "kernel": kernel, "cpu_throughput": float(cpu_thr),
                       "cuda_latency_us": parse_seconds(cuda_lat, where) * 1e6,
                       "cuda_throughput": float(cuda_thr),
                       "crossover_n": None if cross.startswith("none") else float(cross),
                       "best_speedup": float(b.group(1)) if b else None,
                       "best_speedup_n": float(b.group(2)) if b else None,
                       "speedup_1e6": None}
            except ValueError as e:
                raise InputError(f"{where}: {e}") from None
            rows.append(row)
            by_kernel[kernel] = row
        elif section in by_kernel and len(cells) == 6 and cells[0] == "1e+06":
            s = re.match(r"^([0-9.eE+-]+)x$", cells[3])
            if s:
                by_kernel[section]["speedup_1e6"] = float(s.group(1))
    if not rows:
        raise InputError(f"{path}: no summary table of a GPU check with both backends")
    return rows


SCALING_COLUMNS = ["case", "size", "p", "measured", "predicted"]


def read_scaling(path):
    """rank_scaling.csv, or the --json file of perf/scaling_model.sh (the model's check
    against the measurements is recomputed from it, as scaling_model.py --from-json does)."""
    with open(path) as f:
        text = f.read()
    if not text.lstrip().startswith("{"):
        return read_csv(path, SCALING_COLUMNS, {"size", "p", "measured", "predicted"}, text)
    try:
        saved = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None
    sys.path.insert(0, HERE)
    import scaling_model
    try:
        # The cases and sizes the file holds (a --quick run has one size per case).
        for case, spec in scaling_model.CASES.items():
            spec["sizes"] = sorted({r["size"] for r in saved["data"].values()
                                    if r["case"] == case})
        alpha, beta = scaling_model.fit_transport(saved["transport"])
        rows = scaling_model.check_table(saved["data"], alpha, beta,
                                         saved.get("cores", os.cpu_count()))
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        raise InputError(f"{path}: not the --json file of perf/scaling_model.sh ({e!r})") from None
    return [{"_line": 0, "case": r["case"], "size": float(r["size"]), "p": float(r["p"]),
             "measured": r["measured"], "predicted": r["predicted"] if r["p"] > 1 else None}
            for r in rows]


# ----------------------------------------------------------------------------------------
# Drawing

def save(fig, out, name, source):
    """out/name.png at DPI, as a 256-colour palette image (a third of the RGBA file's size;
    line plots use few colours) without the software version, so that a redrawn figure
    differs only where its data do."""
    path = os.path.join(out, name + ".png")
    fig.tight_layout()
    fig.set_dpi(DPI)
    fig.canvas.draw()
    from PIL import Image
    width, height = fig.canvas.get_width_height()
    image = Image.frombuffer("RGBA", (width, height), fig.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(
        path, optimize=True)
    plt.close(fig)
    print(f"plot_performance: wrote {path} (from {source})")


def short(x):
    """348, 2000, 2.1e4: a size as a reader writes it."""
    if x < 1e4:
        return f"{x:.0f}"
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def figure_mfg_games(path, out):
    rows = read_games(path)
    dims = {"crowd1d": 1, "crowd2d": 2, "crowd3d": 3}
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    series = {}
    for r in rows:
        problem, points, steps, ranks = need(path, r, "problem", "points", "steps", "ranks")
        if problem not in dims:
            raise InputError(f"{path}:{r['_line']}: problem '{problem}' is not one of "
                             f"{', '.join(dims)}")
        x = points ** dims[problem] * (steps + 1)
        key = (dims[problem], r["method"], int(ranks))
        grid = f"{int(points)}" + (f"^{dims[problem]}" if dims[problem] > 1 else "")
        series.setdefault(key, []).append((x, need(path, r, "solve_min"), int(r["iterations"]),
                                           f"{grid} x {int(steps)}"))
    colours = {1: "tab:blue", 2: "tab:orange", 3: "tab:green"}
    for (dim, method, ranks), pts in sorted(series.items()):
        pts.sort()
        baseline = method != "auto"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colours.get(dim, "black"),
                linestyle="--" if baseline else "-", marker="s" if baseline else "o",
                label=f"{dim}D, {method}{' (defaults)' if method == 'auto' else ''}, "
                      f"{ranks} rank{'s' if ranks > 1 else ''}")
        # 2D labels above and left of their points, 3D below and right: the two small games
        # lie close together.
        offset = {1: (6, -4), 2: (-8, 6), 3: (6, -14)}[dim]
        for x, y, its, grid in pts:
            ax.annotate(f"{grid}, {its} it.", (x, y), textcoords="offset points",
                        xytext=offset, fontsize="x-small", ha="right" if dim == 2 else "left")
    two_d = [p for (dim, method, _), pts in series.items() if dim == 2 for p in pts
             if p[3] == "256^2 x 100"]
    if two_d:
        ax.plot([two_d[0][0]], [45.0], marker="*", markersize=11, color="tab:red",
                linestyle="none", label="target: 2D 256^2 x 100 in 45 s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    xs = [p[0] for pts in series.values() for p in pts]
    ax.set_xlim(min(xs) / 3.0, max(xs) * 3.0)  # room for the labels
    ax.set_xlabel("space-time grid points (points per axis ^ dim x (steps + 1))")
    ax.set_ylabel("solve [s]")
    ax.set_title("Crowd games (bench_mfg) to their tolerance")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left")
    save(fig, out, "mfg_games", path)


def figure_fractional_kernels(path, out):
    times = read_benchmarks(path)
    panels = [
        ("History sum (GL weights), one apply", "N",
         [("BM_ConvolutionDirect", "direct O(N^2)", "--"), ("BM_ConvolutionFft", "FFT", "-")]),
        ("Time-fractional L1 history, 10^4 points", "time steps N_t",
         [("BM_HistoryDirect", "direct L1 sum", "--"), ("BM_HistorySoe", "sum of exponentials", "-")]),
        ("Riesz operator, s = 1.5", "unknowns N",
         [("BM_RieszProductDense", "dense product", "--"), ("BM_RieszProductShell", "FFT product", "-"),
          ("BM_RieszStepShellCg", "CN step, CG + circulant", ":")]),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(12.0, 4.0))
    drawn = 0
    for ax, (title, xlabel, curves) in zip(axes, panels):
        for bench, label, style in curves:
            pts = sorted((n, t) for (b, n), t in times.items() if b == bench)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=style, marker="o",
                        label=label)
                drawn += 1
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("seconds")
        ax.set_title(title, fontsize="medium")
        ax.grid(True, which="major", alpha=0.3)
        if ax.get_lines():
            ax.legend(fontsize="small")
    if not drawn:
        raise InputError(f"{path}: none of the benchmarks BM_Convolution*, BM_History*, BM_Riesz*")
    save(fig, out, "fractional_kernels", path)


def figure_fode_history(path, out):
    rows = read_fode(path)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11.0, 4.2))
    t1 = sorted((need(path, r, "N"), need(path, r, "setup") + need(path, r, "solve"))
                for r in rows if r["table"] == "1")
    t2 = sorted((need(path, r, "N"), need(path, r, "direct"), need(path, r, "nested"))
                for r in rows if r["table"] == "2")
    if t1:
        ax.plot([p[0] for p in t1], [p[1] for p in t1], marker="o", label="nested FFT history")
        n0, s0 = t1[-1]
        ref = [(n, s0 * (n * math.log2(n) ** 2) / (n0 * math.log2(n0) ** 2)) for n, _ in t1]
        ax.plot([p[0] for p in ref], [p[1] for p in ref], color="0.6", linestyle=":",
                label="N log^2 N")
    if t2:
        ax.plot([p[0] for p in t2], [p[1] for p in t2], marker="s", linestyle="--",
                label="direct O(N^2) history")
        ax.plot([p[0] for p in t2], [p[2] for p in t2], marker="^", linestyle="none",
                label="nested FFT, same run")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("steps N")
    ax.set_ylabel("setup + solve [s]")
    ax.set_title("Fractional ODE (ABM): history sums", fontsize="medium")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    t4 = [r for r in rows if r["table"] == "4"]
    uni = [r for r in rows if r["table"] in ("4", "uniform")]
    if t4:
        pts = [(need(path, r, "graded"), need(path, r, "graded_error"))
               for r in sorted(t4, key=lambda r: need(path, r, "N"))]
        ax2.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label="graded mesh r = 2")
    if uni:
        pts = [(need(path, r, "uniform"), need(path, r, "uniform_error"))
               for r in sorted(uni, key=lambda r: need(path, r, "N"))]
        ax2.plot([p[0] for p in pts], [p[1] for p in pts], marker="s", linestyle="--",
                 label="uniform mesh, FFT history")
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("seconds")
    ax2.set_ylabel("max error")
    ax2.set_title("D^0.5 y = -y (trapezoidal): error against time", fontsize="medium")
    ax2.grid(True, which="major", alpha=0.3)
    if ax2.get_lines():
        ax2.legend(fontsize="small")
    if not t1 and not t2 and not t4:
        raise InputError(f"{path}: no rows of tables 1, 2 or 4")
    save(fig, out, "fode_history", path)


def figure_gpu_crossover(path, out):
    rows = read_gpu(path)
    rows = sorted(rows, key=lambda r: (r["crossover_n"] is None, r["crossover_n"] or 0.0))
    names = [r["kernel"] for r in rows]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11.0, 5.0), sharey=True,
                                  gridspec_kw={"width_ratios": [3, 2]})
    lo, hi = 1e2, 1e7
    for y, r in enumerate(rows):
        cross = r["crossover_n"]
        if cross is None:
            ax.barh(y, hi - lo, left=lo, color="0.8", height=0.6)
            ax.text(hi, y, " cpu always", va="center", fontsize="x-small")
        else:
            c = min(max(cross, lo), hi)
            ax.barh(y, c - lo, left=lo, color="0.8", height=0.6)
            ax.barh(y, hi - c, left=c, color="tab:green", height=0.6)
            ax.plot([cross], [y], marker="|", color="black", markersize=12)
            ax.text(c, y + 0.38, short(cross), ha="center", fontsize="x-small")
    ax.set_xscale("log")
    ax.set_xlim(lo, hi * 6)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(names, fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel("work units n per call (grey: cpu, green: cuda; | crossover n*)")
    ax.set_title("The selector's choice on an H200 against one core", fontsize="medium")
    for y, r in enumerate(rows):
        if r["speedup_1e6"] is not None:
            ax2.plot([r["speedup_1e6"]], [y], marker="o", color="tab:blue", linestyle="none",
                     label="at n = 10^6" if y == 0 else None)
        if r["best_speedup"] is not None:
            ax2.plot([r["best_speedup"]], [y], marker="^", color="tab:orange", linestyle="none",
                     label="best measured" if y == 0 else None)
    ax2.axvline(1.0, color="black", linewidth=0.8)
    ax2.set_xscale("log")
    ax2.set_xlabel("speed-up, cpu time / cuda time")
    ax2.set_title("What the GPU buys", fontsize="medium")
    ax2.grid(True, axis="x", which="major", alpha=0.3)
    ax2.legend(fontsize="small", loc="lower right")
    save(fig, out, "gpu_crossover", path)


def figure_rank_scaling(path, out):
    rows = read_scaling(path)
    cases = [("mfg2d", "2D MFG, per outer iteration", "{n}^2 x 20"),
             ("fpde1d", "1D FPDE, per step", "{n}"), ("fpde2d", "2D FPDE, per step", "{n}^2")]
    one = {}
    for r in rows:
        if int(need(path, r, "p")) == 1:
            one[(r["case"], r["size"])] = need(path, r, "measured")
    fig, axes = plt.subplots(1, 3, figsize=(12.0, 3.9), sharey=True)
    for ax, (case, title, grid) in zip(axes, cases):
        sizes = sorted({r["size"] for r in rows if r["case"] == case})
        for size in sizes:
            if (case, size) not in one:
                raise InputError(f"{path}: {case} {size:g} has no row at p = 1")
            t1 = one[(case, size)]
            pts = sorted((r["p"], need(path, r, "measured"), r["predicted"]) for r in rows
                         if r["case"] == case and r["size"] == size)
            label = grid.format(n=f"{size:g}")
            line, = ax.plot([p for p, _, _ in pts], [t1 / t for _, t, _ in pts], marker="o",
                            label=f"{label}, measured")
            pred = [(p, t1 / t) for p, _, t in pts if t]
            if pred:
                ax.plot([1.0] + [p for p, _ in pred], [1.0] + [v for _, v in pred],
                        color=line.get_color(), linestyle="--", marker="x",
                        label=f"{label}, model")
        ax.plot([1, 2, 3], [1, 2, 2], color="0.6", linestyle=":", label="2 cores, ideal")
        ax.set_xticks([1, 2, 3])
        ax.set_xlabel("ranks (3 ranks share 2 cores)")
        ax.set_title(title, fontsize="medium")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="x-small")
    axes[0].set_ylabel("speed-up over 1 rank")
    save(fig, out, "rank_scaling", path)


FIGURES = {
    "mfg_games": ("mfg_games.csv", "games", figure_mfg_games),
    "fractional_kernels": ("fractional_benchmarks.csv", "fractional", figure_fractional_kernels),
    "fode_history": ("fode_history.csv", "fode", figure_fode_history),
    "gpu_crossover": ("gpu_h200.csv", "gpu", figure_gpu_crossover),
    "rank_scaling": ("rank_scaling.csv", "scaling", figure_rank_scaling),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(TOP, "docs", "figures"),
                        help="directory for the PNG files (default: docs/figures/)")
    parser.add_argument("--data", default=os.path.join(HERE, "data"),
                        help="directory of the default inputs (default: perf/data/)")
    parser.add_argument("--only", nargs="+", choices=sorted(FIGURES), metavar="FIGURE",
                        help="draw only these figures: " + ", ".join(FIGURES))
    for name, (default, option, _) in FIGURES.items():
        parser.add_argument(f"--{option}", metavar="FILE",
                            help=f"input of {name} (default: perf/data/{default})")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    status = 0
    for name, (default, option, draw) in FIGURES.items():
        if args.only and name not in args.only:
            continue
        path = getattr(args, option) or os.path.join(args.data, default)
        try:
            draw(path, args.out)
        except InputError as e:
            print(f"plot_performance: {e}", file=sys.stderr)
            status = 2
        except OSError as e:
            print(f"plot_performance: {name}: cannot read {path}: {e.strerror}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
