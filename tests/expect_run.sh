#!/usr/bin/env bash
# Runs a command and checks how it ends, for tests of failure paths.
#   expect_run.sh [--exit N|nonzero] [--contains TEXT]... [--lacks TEXT]... [--count TEXT N]
#                 [--seconds S] -- command...
# Passes (exit 0) when the command's exit status matches, its combined output contains each
# --contains text, contains no --lacks text, --count TEXT occurs exactly N times, and it
# finished within S seconds.
set -u
want_exit=0; seconds=120; contains=(); lacks=(); count_text=""; count_n=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --exit) want_exit="$2"; shift 2 ;;
    --contains) contains+=("$2"); shift 2 ;;
    --lacks) lacks+=("$2"); shift 2 ;;
    --count) count_text="$2"; count_n="$3"; shift 3 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "expect_run: unknown option $1"; exit 2 ;;
  esac
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
timeout --signal=KILL "$seconds" "$@" >"$out" 2>&1
status=$?
elapsed=$(( $(date +%s) - start ))
cat "$out"
fail=0
if [[ $status -eq 137 && $elapsed -ge $seconds ]]; then
  echo "expect_run: FAILED: command did not finish within ${seconds}s (hang)"; fail=1
fi
if [[ "$want_exit" == "nonzero" ]]; then
  [[ $status -ne 0 ]] || { echo "expect_run: FAILED: expected a non-zero exit, got 0"; fail=1; }
elif [[ $status -ne $want_exit ]]; then
  echo "expect_run: FAILED: expected exit $want_exit, got $status"; fail=1
fi
for t in "${contains[@]+"${contains[@]}"}"; do
  grep -qF -- "$t" "$out" || { echo "expect_run: FAILED: output lacks: $t"; fail=1; }
done
for t in "${lacks[@]+"${lacks[@]}"}"; do
  if grep -qF -- "$t" "$out"; then echo "expect_run: FAILED: output contains: $t"; fail=1; fi
done
if [[ -n "$count_text" ]]; then
  n=$(grep -cF -- "$count_text" "$out")
  [[ $n -eq $count_n ]] || { echo "expect_run: FAILED: '$count_text' occurs $n times, expected $count_n"; fail=1; }
fi
[[ $fail -eq 0 ]] && echo "expect_run: ok (exit $status, ${elapsed}s)"
exit $fail
