#!/bin/bash
# Full disks and unwritable output paths through the driver: `fracmfg run` under mpiexec on
# 2 ranks, writing into a small file system. One case per call; tests/faults/CMakeLists.txt
# registers them.
#
#   disk_test.sh CASE
#
# Environment: see tests/faults/common.sh.
#
# The small file system is a tmpfs of a few MB mounted in the case's directory (root may
# mount here; it is unmounted on every exit). Where mounting is not permitted the cases fall
# back to the file size limit (ulimit -S -f, SIGXFSZ ignored: writes past it fail with
# EFBIG); the mechanism used is printed. DISK_TEST_MECHANISM=ulimit forces the fallback.
#
# Cases:
#   disk_full_precheck      mfg and fpde decks whose estimated output does not fit: exit 5
#                           before solving (no progress lines), a message with both sizes,
#                           nothing written
#   disk_full_during_write  FRACMFG_SKIP_SPACE_CHECK=1 gets past the check: (a) mfg with a
#                           checkpoint every iteration on a file system with room for one
#                           checkpoint but not for its replacement next to it: exit 5, one
#                           line naming the checkpoint and "No space left on device", no
#                           temporary file, and the earlier checkpoint is whole (a run
#                           resumes from it); (b) the results of an fpde run do not fit: exit
#                           5, nothing under the final name, no temporary file
#   unwritable_output       output directory under a read-only mount, an output path whose
#                           parent is a regular file, an unwritable checkpoint path: exit 5
#                           before solving
# Exit 0: passed, anything else: failed.
set -uo pipefail

case_name=${1:?usage: disk_test.sh CASE}
tool=disk_test
# shellcheck source=tests/faults/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

mounts=()
cleanup() {
  local m
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
}
trap cleanup EXIT
# A mount left over from an earlier, killed run of this case.
if [[ -d $work ]]; then
  while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done < <(
    awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r)
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || fail "cannot create $work"

# small_fs DIR KIB [OPTS]: a tmpfs of KIB KiB at DIR; fails (status 1) when mounting is not
# permitted.
small_fs() {
  mkdir -p "$1" || return 1
  mount -t tmpfs -o "size=${2}k${3:+,$3}" tmpfs "$1" 2>/dev/null || return 1
  mounts+=("$1")
}
mechanism=ulimit
probe=$work/.probe
if [[ ${DISK_TEST_MECHANISM:-} != ulimit ]] && small_fs "$probe" 64; then
  mechanism=tmpfs
  umount "$probe" && unset 'mounts[-1]'
fi
note "small file system: $mechanism"

# no_temporary DIR: no ".<name>.tmp-*" file left in DIR.
no_temporary() {
  local left
  left=$(find "$1" -maxdepth 1 -name '.*.tmp-*' 2>/dev/null)
  [[ -z $left ]] || fail "temporary file(s) left behind: $left"
}

# deck IN OUT KEY=VALUE...
deck() {
  local in=$1 out=$2
  shift 2
  "$python" "$deck_tool" set "$in" "$out" "$@" || fail "cannot write the deck $out"
}

# run LOG [ULIMIT_KIB] -- ARGS...: mpiexec -n 2 fracmfg run ARGS, with the file size limit
# in the ranks when given (the ulimit mechanism; mpiexec itself keeps none, its PMIx files
# need room); returns the exit code.
run() {
  local log=$1 limit=$2
  shift 3
  if [[ -n $limit ]]; then
    "${mpiexec[@]}" -n 2 /bin/bash -c 'trap "" XFSZ && ulimit -S -f "$0" && exec "$@"' "$limit" \
      "$fracmfg" run "$@" >"$log" 2>&1
  else
    "${mpiexec[@]}" -n 2 "$fracmfg" run "$@" >"$log" 2>&1
  fi
}

case_disk_full_precheck() {
  local out=$work/small limit=""
  if [[ $mechanism == tmpfs ]]; then
    small_fs "$out" 2048 || fail "cannot mount"
  else
    mkdir -p "$out"
    limit=2048
  fi
  # mfg: u and m at 2001 levels of 1000 points, 32 MB; with checkpoints, 2 x 32 MB more.
  deck "$top/inputs/crowd_1d-ci.yaml" mfg.yaml "mfg.grid.points=[1000]" mfg.time.steps=2000 \
    output.every=1 output.checkpoint_every=1 "output.file=$out/crowd.h5" \
    "output.checkpoint_file=$out/crowd.chk.h5"
  run mfg.log "$limit" -- "$work/mfg.yaml"
  local status=$?
  if [[ $mechanism == tmpfs ]]; then
    expect mfg.log $status 5 "$out/crowd.h5: the results need about" "the file system has" \
      "'$out/crowd.chk.h5' about" "MB free"
  else
    expect mfg.log $status 5 "the results need about" "the file size limit (ulimit -f) is"
  fi
  one_line_error mfg.log
  grep -q "mfg iteration" mfg.log && fail "the mfg run iterated before the error"
  [[ -z $(ls -A "$out") ]] || fail "files written: $(ls -A "$out")"
  # fpde: 2001 fields of 4000 points, 64 MB.
  deck "$top/inputs/fpde_subdiffusion_1d-ci.yaml" fpde.yaml "fpde.grid.points=[4000]" \
    fpde.time.steps=2000 output.every=1 output.checkpoint_every=0 "output.file=$out/sub.h5"
  run fpde.log "$limit" -- "$work/fpde.yaml"
  status=$?
  expect fpde.log $status 5 "$out/sub.h5: the results need about"
  one_line_error fpde.log
  grep -q "fpde: step" fpde.log && fail "the fpde run stepped before the error"
  [[ -z $(ls -A "$out") ]] || fail "files written: $(ls -A "$out")"
  true
}

# The size in KiB of FILE.
kib() { echo $(( ($(stat -c %s "$1") + 1023) / 1024 )); }

case_disk_full_during_write() {
  export FRACMFG_SKIP_SPACE_CHECK=1
  # (a) mfg, a checkpoint every iteration. Its size first, on the big file system.
  deck "$top/inputs/crowd_1d-ci.yaml" mfg.yaml "mfg.grid.points=[200]" mfg.time.steps=100 \
    output.every=1 output.checkpoint_every=1 mfg.iteration.max_iterations=3 \
    output.file=big/crowd.h5 output.checkpoint_file=big/crowd.chk.h5
  run sizes.log "" -- "$work/mfg.yaml"
  local status=$?
  ((status == 0 || status == 4)) || { show sizes.log; fail "the sizing run failed ($status)"; }
  local ck out_kib
  ck=$(kib big/crowd.chk.h5)
  out_kib=$(kib big/crowd.h5)
  note "checkpoint $ck KiB, results $out_kib KiB"
  local small=$work/small limit="" at
  if [[ $mechanism == tmpfs ]]; then
    # Room for one checkpoint and a half: the second one cannot be written next to the first.
    small_fs "$small" $((ck * 3 / 2)) || fail "cannot mount"
  else
    # The file size limit holds per file: an older checkpoint is put in place, the run's
    # first checkpoint cannot be written.
    mkdir -p "$small"
    cp big/crowd.chk.h5 "$small/crowd.chk.h5" || fail "cannot copy the checkpoint"
    limit=$((ck / 2))
  fi
  deck "$work/mfg.yaml" mfg_small.yaml mfg.iteration.max_iterations=50 \
    "output.file=$small/crowd.h5" "output.checkpoint_file=$small/crowd.chk.h5"
  run mfg.log "$limit" -- "$work/mfg_small.yaml"
  status=$?
  if [[ $mechanism == tmpfs ]]; then
    expect mfg.log $status 5 "cannot write checkpoint '$small/crowd.chk.h5': No space left on device" \
      "the incomplete file was removed, the previous checkpoint is unchanged" \
      "mfg: checkpoint of iteration 1 written"
    at=$(sed -n 's/.*mfg: checkpoint of iteration \([0-9]*\) written.*/\1/p' mfg.log | tail -n 1)
  else
    expect mfg.log $status 5 "cannot write checkpoint '$small/crowd.chk.h5': File too large" \
      "the incomplete file was removed, the previous checkpoint is unchanged"
    cmp -s big/crowd.chk.h5 "$small/crowd.chk.h5" || fail "the older checkpoint was changed"
    at=3
  fi
  one_line_error mfg.log
  no_temporary "$small"
  [[ ! -e $small/crowd.h5 ]] || fail "a results file was written"
  [[ -f $small/crowd.chk.h5 ]] || fail "the earlier checkpoint is gone"
  # The earlier checkpoint is whole: a run resumes from it (on the big file system).
  cp "$small/crowd.chk.h5" resume.chk.h5
  deck "$work/mfg.yaml" resume.yaml mfg.iteration.max_iterations=$((at + 1)) \
    output.checkpoint_every=0 output.file=resumed/crowd.h5
  FRACMFG_RESTART=$work/resume.chk.h5 run resume.log "" -- "$work/resume.yaml"
  status=$?
  ((status == 0 || status == 4)) || { show resume.log; fail "no resume from the checkpoint ($status)"; }
  expect resume.log $status $status "mfg: restarted from $work/resume.chk.h5 at iteration $at"
  [[ -f resumed/crowd.h5 ]] || fail "the resumed run wrote no results"

  # (b) fpde: its fields do not fit (during the time loop or at the commit).
  local tiny=$work/tiny
  limit=""
  if [[ $mechanism == tmpfs ]]; then
    small_fs "$tiny" 1024 || fail "cannot mount"
  else
    mkdir -p "$tiny"
    limit=1024
  fi
  deck "$top/inputs/fpde_subdiffusion_1d-ci.yaml" fpde.yaml "fpde.grid.points=[2000]" \
    fpde.time.steps=200 output.every=1 output.checkpoint_every=0 "output.file=$tiny/sub.h5"
  run fpde.log "$limit" -- "$work/fpde.yaml"
  status=$?
  if [[ $mechanism == tmpfs ]]; then
    expect fpde.log $status 5 "cannot write output file '$tiny/sub.h5': No space left on device"
  else
    expect fpde.log $status 5 "cannot write output file '$tiny/sub.h5': File too large"
  fi
  one_line_error fpde.log
  no_temporary "$tiny"
  [[ ! -e $tiny/sub.h5 ]] || fail "a results file was written"
  true
}

case_unwritable_output() {
  # A read-only mount (root ignores directory permissions, not a read-only file system).
  if [[ $mechanism == tmpfs ]]; then
    small_fs "$work/ro" 256 ro || fail "cannot mount read-only"
    deck "$top/inputs/crowd_1d-ci.yaml" ro.yaml "output.file=$work/ro/crowd.h5"
    run ro.log "" -- "$work/ro.yaml"
    expect ro.log $? 5 "cannot write output file '$work/ro/crowd.h5': directory '$work/ro' is not writable: Read-only file system"
    one_line_error ro.log
    grep -q "mfg iteration" ro.log && fail "the run iterated before the error"
  else
    note "no read-only mount without mount permission: that part is left out"
  fi
  # An output path whose parent is a regular file.
  echo "a file where a directory should be" >blocker
  deck "$top/inputs/fpde_subdiffusion_1d-ci.yaml" file.yaml "output.file=$work/blocker/sub.h5"
  run file.log "" -- "$work/file.yaml"
  expect file.log $? 5 "cannot write output file '$work/blocker/sub.h5': '$work/blocker' exists and is not a directory"
  one_line_error file.log
  grep -q "fpde: step" file.log && fail "the run stepped before the error"
  # A good output path and an unwritable checkpoint path.
  deck "$top/inputs/crowd_1d-ci.yaml" ck.yaml output.file=results/crowd.h5 \
    output.checkpoint_every=2 "output.checkpoint_file=$work/blocker/crowd.chk.h5"
  run ck.log "" -- "$work/ck.yaml"
  expect ck.log $? 5 "'$work/blocker/crowd.chk.h5'" "exists and is not a directory"
  one_line_error ck.log
  grep -q "mfg iteration" ck.log && fail "the run iterated before the error"
  [[ ! -e results/crowd.h5 ]] || fail "a results file was written"
  true
}

case "$case_name" in
  disk_full_precheck | disk_full_during_write | unwritable_output)
    "case_$case_name"
    ;;
  *) fail "unknown case '$case_name'" ;;
esac
echo "PASSED: $case_name ($mechanism)"
