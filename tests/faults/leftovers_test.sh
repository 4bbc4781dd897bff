#!/bin/bash
# No temporary file outlives its run: `fracmfg run` under mpiexec on 2 ranks. One case per
# call; tests/faults/CMakeLists.txt registers them.
#
#   leftovers_test.sh CASE
#
# Environment: see tests/faults/common.sh.
#
# Cases:
#   fode_sigterm        SIGTERM to mpiexec during a fode run (which has no checkpoint to
#                       write): the run ends, no temporary file is left and nothing is
#                       written under the final name
#   stale_temporaries   temporary files of the same output left by processes of this host
#                       that are gone are removed by the next run; those of a process that
#                       still runs, or of another host, are left alone
# Exit 0: passed, anything else: failed.
set -uo pipefail

case_name=${1:?usage: leftovers_test.sh CASE}
tool=leftovers_test
# shellcheck source=tests/faults/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

rm -rf "$work" && mkdir -p "$work/out" && cd "$work" || fail "cannot create $work"

# deck IN OUT KEY=VALUE...
deck() {
  local in=$1 out=$2
  shift 2
  "$python" "$deck_tool" set "$in" "$out" "$@" || fail "cannot write the deck $out"
}
temporaries() { find "$work/out" -name '.*.tmp-*' | sort; }

case_fode_sigterm() {
  # Long enough to be stopped while its results are open (a few 10 s uninterrupted).
  deck "$top/inputs/fode_relaxation-ci.yaml" fode.yaml fode.steps=20000000 fode.history=fft output.every=10000 \
    "output.file=$work/out/relax.h5"
  "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/fode.yaml" >run.log 2>&1 &
  local pid=$! k
  for ((k = 0; k < 300; ++k)); do
    [[ -n $(temporaries) ]] && break
    sleep 0.1
  done
  [[ -n $(temporaries) ]] || { kill -KILL $pid; show run.log; fail "no temporary file appeared"; }
  sleep 1
  kill -TERM $pid
  local status=0
  for ((k = 0; k < 300; ++k)); do
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  kill -0 $pid 2>/dev/null && { kill -KILL $pid; show run.log; fail "the run did not end within 30 s"; }
  wait $pid
  status=$?
  ((status != 0)) || { show run.log; fail "exit code 0 after SIGTERM"; }
  [[ -z $(temporaries) ]] || { show run.log; fail "temporary file(s) left: $(temporaries)"; }
  [[ ! -e out/relax.h5 && ! -e out/relax.xmf ]] || fail "results written under the final name"
  note "ended with exit code $status, nothing left"
}

case_stale_temporaries() {
  local host dead=4000000
  host=$(hostname)
  host=${host%%.*}
  host=${host//[^a-zA-Z0-9]/_}
  host=${host:0:40}
  while kill -0 $dead 2>/dev/null; do dead=$((dead + 1)); done
  deck "$top/inputs/fode_relaxation-ci.yaml" fode.yaml "output.file=$work/out/relax.h5"
  touch "out/.relax.h5.tmp-$host-$dead-0badf00d" "out/.relax.xmf.tmp-$host-$dead-0badf00d" \
    "out/.relax.h5.tmp-1234-$host-$dead-00c0ffee"
  touch "out/.relax.h5.tmp-$host-$$-cafef00d" "out/.relax.h5.tmp-otherhost-$dead-12345678" \
    "out/.other.h5.tmp-$host-$dead-0badf00d"
  "${mpiexec[@]}" -n 2 "$fracmfg" run "$work/fode.yaml" >run.log 2>&1
  expect run.log $? 0
  [[ -f out/relax.h5 ]] || fail "no results"
  local left
  left=$(cd out && find . -name '.*.tmp-*' -printf '%f\n' | LC_ALL=C sort | tr '\n' ' ')
  local want
  want=$(printf '%s\n' ".other.h5.tmp-$host-$dead-0badf00d" ".relax.h5.tmp-$host-$$-cafef00d" \
    ".relax.h5.tmp-otherhost-$dead-12345678" | LC_ALL=C sort | tr '\n' ' ')
  [[ $left == "$want" ]] || fail "left: '$left', expected '$want'"
}

case "$case_name" in
  fode_sigterm | stale_temporaries) "case_$case_name" ;;
  *) fail "unknown case '$case_name'" ;;
esac
echo "PASSED: $case_name"
