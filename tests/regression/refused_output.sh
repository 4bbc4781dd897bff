#!/usr/bin/env bash
# refused_output.sh WORKDIR FRACMFG MPIRUN...
# Output paths that would overwrite what they must not are refused before anything is
# written (exit code 2, file:line:col: key: message), and nothing is overwritten: the deck
# stays byte-identical, /dev/full stays a device, no results or sidecar appear, a checkpoint
# named by FRACMFG_RESTART that is also the results file stays as it was.
set -uo pipefail
work=$1 fracmfg=$2
shift 2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
check() {  # check WHAT CONDITION...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
# refused DECK TEXT: runs `fracmfg run DECK` on 2 ranks, expects exit 2 and TEXT once.
refused() {
  local deck=$1 text=$2 out status
  out=$(FRACMFG_RESTART="${restart:-}" "${mpirun[@]}" 2 "$fracmfg" run "$deck" 2>&1)
  status=$?
  echo "$out"
  check "$deck: exit code 2 (got $status)" test "$status" -eq 2
  check "$deck: says '$text' once" test "$(grep -cF -- "$text" <<<"$out")" -eq 1
}
mpirun=("$@")
body='problem: fode
fode: {order: 0.8, horizon: 1.0, steps: 10, rhs: ["-y1"], initial: [1.0]}'

# 1. The results file is the deck itself.
printf '%s\noutput: {file: self.yaml}\n' "$body" >self.yaml
cp self.yaml self.orig
restart="" refused self.yaml "self.yaml:3:16: output.file: 'self.yaml' is the deck"
check "the deck is byte-identical" cmp -s self.yaml self.orig

# 2. A device node as results file (as root, rename() would have replaced it).
printf '%s\noutput: {file: /dev/full}\n' "$body" >device.yaml
restart="" refused device.yaml "device.yaml:3:16: output.file: '/dev/full' exists and is a character device"
check "/dev/full is still a character device" test -c /dev/full

# 3. Results named like their own XDMF sidecar; the checkpoint as the sidecar.
printf '%s\noutput: {file: r.xmf}\n' "$body" >sidecar.yaml
restart="" refused sidecar.yaml "output.file: 'r.xmf' is also its own XDMF sidecar"
printf '%s\noutput: {file: c.h5, checkpoint_file: c.xmf}\n' "$body" >chk.yaml
restart="" refused chk.yaml "output.checkpoint_file: 'c.xmf' is also the XDMF sidecar"
check "no output was written" test ! -e r.xmf -a ! -e c.h5 -a ! -e c.xmf -a ! -e results

# 4. FRACMFG_RESTART naming a checkpoint that is this deck's results file: refused before
#    the run could replace the checkpoint with results.
cat >fpde.yaml <<'DECK'
problem: fpde
fpde:
  type: space_fractional
  order: 1.8
  domain: {length: [1.0], boundary: periodic}
  grid: {points: [16]}
  time: {horizon: 0.01, steps: 2}
  diffusivity: 0.5
  initial: "sin(2*pi*x)"
output: {file: out.h5, checkpoint_every: 1}
DECK
"${mpirun[@]}" 2 "$fracmfg" run fpde.yaml >/dev/null 2>&1
check "the fpde deck ran" test -f out.h5 -a -f out.chk.h5
sed 's/file: out.h5/file: out.chk.h5/' fpde.yaml >onto.yaml
cp out.chk.h5 chk.orig
restart=out.chk.h5 refused onto.yaml "cannot resume from FRACMFG_RESTART=out.chk.h5: it is the results file 'out.chk.h5'"
check "the checkpoint is unchanged" cmp -s out.chk.h5 chk.orig

# 5. Names the file system cannot hold are refused where the deck is read; a long name that
#    fits is written, and its temporary names (shortened) leave nothing behind.
long=$(printf 'n%.0s' $(seq 1 300))
printf '%s\noutput: {file: %s.h5}\n' "$body" "$long" >long.yaml
restart="" refused long.yaml "long.yaml:3:16: output.file: the file name of the results file is 303 bytes long; file systems allow at most 255 bytes per name"
printf '%s\noutput: {file: %s.h5}\n' "$body" "${long:0:252}" >sidecar_long.yaml
restart="" refused sidecar_long.yaml "output.file: the file name of the XDMF sidecar of the results is 256 bytes long"
fits=${long:0:251}
printf '%s\noutput: {file: %s.h5}\n' "$body" "$fits" >fits.yaml
"${mpirun[@]}" 2 "$fracmfg" run fits.yaml >fits.log 2>&1
check "a 254-byte output name is written (exit $?)" test -f "$fits.h5"
check "no temporary file is left" test -z "$(find . -name '.*.tmp-*')"
check "nothing but the results was written" test "$(ls -A | grep -c "$fits")" -eq 1

[[ $failures -eq 0 ]] && echo "refused_output: all passed" && exit 0
echo "refused_output: $failures check(s) failed"
exit 1
