#!/usr/bin/env bash
# plot_performance.sh WORKDIR
# perf/plot_performance.py, the figures of docs/performance.md: from the committed data
# files (perf/data/) and from small inputs in the perf programs' own formats (bench_mfg's
# lines, Google Benchmark CSV, bench_fode's tables, the report of scripts/gpu-check, the
# --json file of perf/scaling_model.sh) every figure is written as a non-empty PNG; a
# malformed CSV is refused with its file and line and a non-zero exit code. Exit code 77
# (skipped) where /usr/bin/python3 has no matplotlib.
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1
work=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
script="$top/perf/plot_performance.py"
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  echo "plot_performance: skipped: /usr/bin/python3 has no matplotlib"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
cd "$work"
figures="mfg_games fractional_kernels fode_history gpu_crossover rank_scaling"
fail() { echo "plot_performance: $*"; exit 1; }
check_pngs() {  # check_pngs DIR: every figure there, a PNG of more than 1 kB
  for name in $figures; do
    local f="$1/$name.png"
    [[ -s "$f" ]] || fail "$f was not written"
    [[ $(head -c 8 "$f" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "$f is not a PNG"
    (($(stat -c %s "$f") > 1000)) || fail "$f is nearly empty ($(stat -c %s "$f") bytes)"
  done
}

# 1. The committed data.
/usr/bin/python3 "$script" --out committed
check_pngs committed

# 2. The perf programs' own output formats, a few rows each.
cat >bench_mfg.txt <<'EOF'
mfg crowd1d 10000 x 1000 steps, 1 rank(s), tol 1e-06, fixed_point, damping 0.50, anderson 0: converged after 36 iterations (GMRES 0)
  set-up 0.0400 s (median 0.0500), solve 14.0600 s (median 14.0700), per iteration 0.39000 s (median 0.39100), 3 rep(s)
  solve CPU time (max over ranks) 14.0000 s (median 14.0100)
mfg crowd1d 10000 x 1000 steps, 1 rank(s), tol 1e-06, auto, damping 0.50, anderson 0: converged after 5 iterations (GMRES 17)
  set-up 0.0700 s (median 0.0800), solve 3.4900 s (median 3.5900), per iteration 0.69800 s (median 0.71800), 3 rep(s)
  solve CPU time (max over ranks) 3.4000 s (median 3.5000)
mfg crowd2d 128 x 128 x 50 steps, 2 rank(s), tol 1e-05, auto, damping 0.50, anderson 0: converged after 29 iterations (GMRES 0)
  set-up 0.2000 s (median 0.2000), solve 8.5600 s (median 8.5600), per iteration 0.29500 s (median 0.29500), 1 rep(s)
  solve CPU time (max over ranks) 8.4000 s (median 8.4000)
EOF
cat >benchmarks.csv <<'EOF'
name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second,label,error_occurred,error_message,N,fft_length
"BM_ConvolutionDirect/1024",1700,410123,409876,ns,,,,,,1024,
"BM_ConvolutionFft/1024",120000,5812,5800,ns,,,,,,1024,2048
name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second,label,error_occurred,error_message
"BM_RieszProductShell/1024/iterations:50/real_time",50,17.1,16.9,us,,,,,
"BM_RieszProductDense/1024/iterations:20/real_time",20,590,588,us,,,,,
EOF
cat >bench_fode.txt <<'EOF'
Table 1: scalar DFF equation (a = 0.5), ABM, history auto, base block 64, one core
         N  setup [s]  solve [s]    history solve/(N lg^2N)      us/step
      4096      0.001      0.011      0.010      1.863e-08        2.686
     16384      0.007      0.019      0.016      5.900e-09        1.160
trapezoidal (Newton, Jacobian given), N = 2^20: setup 0.170 s, solve 0.880 s (history 0.600 s)

Table 2: direct O(N^2) against nested FFT history, same run, ABM
         N   direct [s]   nested [s]   speed-up  |y_d - y_f|
     10000        0.065        0.024        2.7     2.00e-15
    100000  (skipped: --direct-max 10000)

Table 4: D^0.5 y = -y, trapezoidal: graded r = 2 (direct history) against uniform (nested FFT history), same run
         N   graded [s]   graded error  uniform [s]  uniform error graded/N^2 [ns]
      1024        0.049      1.500e-07        0.005      1.400e-04         46.730
      2048        0.201      3.800e-08        0.001      7.300e-05         47.922
EOF
cat >gpu-check.md <<'EOF'
# fracmfg GPU check

- host: `node`
- device: `NVIDIA H200`

## Summary

| kernel | cpu latency | cpu throughput [n/s] | cuda latency | cuda throughput [n/s] | crossover n* | best speed-up (at n) |
|---|---|---|---|---|---|---|
| kde_binned_1d | 68.5 us | 1.71e+07 | 131.0 us | 3.67e+07 | 2e+03 | 3.60x (3.16e+06) |
| mfg_fp_rows | 0.1 us | 5.24e+08 | 42.0 us | 3.04e+08 | none (cpu always) | 1.11x (1e+07) |

## kde_binned_1d

| n | cpu | cuda | speed-up | faster (measured) | selector (model) |
|---|---|---|---|---|---|
| 1e+06 | 58.480 ms | 22.667 ms | 2.58x | cuda | cuda |

## mfg_fp_rows

| n | cpu | cuda | speed-up | faster (measured) | selector (model) |
|---|---|---|---|---|---|
| 1e+06 | 1.800 ms | 2.800 ms | 0.64x | cpu | cpu |
EOF
/usr/bin/python3 - <<'PY'
# A --json file of perf/scaling_model.sh: the figures one case needs at 1, 2 and 3 ranks.
import json
def rank(case, size, p, seconds, ksp):
    return {"case": case, "size": size, "p": p, "seconds": seconds, "msgs_max": 10.0 * (p > 1),
            "bytes_max": 1e4 * (p > 1), "reductions": 50.0, "mon_e_msgs": 0.0,
            "mon_e_bytes": 0.0, "mon_c_msgs": 51.0, "unlogged_coll": 1.0 * (p > 1),
            "ksp_its": ksp, "ksp_time": 0.6 * seconds}
data = {}
for case in ("mfg2d", "fpde1d", "fpde2d"):
    for p, (t, k) in zip((1, 2, 3), ((0.3, 800.0), (0.2, 1100.0), (0.28, 1100.0))):
        data[f"{case}/64/{p}"] = rank(case, 64, p, t, k)
pingpong = [[8, 1e-7], [64, 1.1e-7], [32768, 1e-6], [1 << 20, 2.2e-5]]
json.dump({"data": data, "transport": {"pingpong": pingpong, "allreduce": {"2": 1.4e-7}},
           "blocks": [], "cores": 2}, open("scaling.json", "w"))
PY
/usr/bin/python3 "$script" --out native --games bench_mfg.txt --fractional benchmarks.csv \
  --fode bench_fode.txt --gpu gpu-check.md --scaling scaling.json | tee native.txt
check_pngs native

# 3. A malformed CSV: a word where a number belongs, then a row with a field too many.
cat >bad_games.csv <<'EOF'
# made up
problem,points,steps,ranks,method,iterations,solve_min,solve_median,date
crowd1d,10000,1000,1,auto,5,3.49,3.59,2026-11-29

crowd2d,128,50,2,auto,29,fast,,2026-11-30
EOF
if /usr/bin/python3 "$script" --out bad --only mfg_games --games bad_games.csv 2>bad.txt; then
  fail "a malformed CSV was accepted"
fi
cat bad.txt
grep -q "bad_games.csv:5: column solve_min: 'fast' is not a number" bad.txt ||
  fail "the refusal does not name the file, line and column"
[[ ! -e bad/mfg_games.png ]] || fail "a figure was drawn from a malformed CSV"
printf 'case,size,p,measured,predicted\nmfg2d,64,1,0.0475,\nmfg2d,64,2,0.0312,0.0281,9\n' >bad_scaling.csv
if /usr/bin/python3 "$script" --out bad --only rank_scaling --scaling bad_scaling.csv 2>bad.txt; then
  fail "a row with a field too many was accepted"
fi
cat bad.txt
grep -q "bad_scaling.csv:3: 6 fields, the header has 5" bad.txt ||
  fail "the refusal of a long row does not name the file and line"
echo "plot_performance: every figure written from the committed data and from the perf" \
  "programs' formats; malformed CSVs refused with file and line"
