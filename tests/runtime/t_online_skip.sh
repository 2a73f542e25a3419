# The side channel calls a skip early: rank 1 never issues seq 1 while rank 0's seq 1
# stays incomplete on the device. Idle or exited → "rank 1 skipped seq 1", well
# before the watchdog (20 s); rank 1 still busy at seq 0 → "rank 1 is slow" first.
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH="$LS_FAKECUDA" LOCKSTEP_TIMEOUT=20 LOCKSTEP_SKIP_MS=300 \
  LOCKSTEP_ONLINE_TIMESTAMPS=1
run() { # name rank1-linger-ms rank1-never
  LS_FAKE_CUDA_NEVER=1 LS_TEST_LINGER_MS=4000 RANK=0 WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/$1" \
    LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge skip 2> "$T/$1.err0" &
  if [ "$3" = 1 ]; then export LS_FAKE_CUDA_NEVER=1; fi
  LS_TEST_LINGER_MS=$2 RANK=1 WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/$1" \
    LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge skip 2> "$T/$1.err1"
  unset LS_FAKE_CUDA_NEVER
  wait
}
t0=$(date +%s)
run idle 3000 0
grep -Eq '^lockstep: rank 0: seq 1 ncclAllReduce on comm [0-9a-f]{16}: rank 1 skipped seq 1 \(skip\): ncclAllReduce\(count=8, dtype=ncclFloat32, redop=ncclSum\) at ls_prog_nccl\+0x[0-9a-f]+ here, not complete after [0-9.]+ s; rank 1 returned from everything after 1 collectives here \[t=[0-9.]+\]$' "$T/idle.err0" ||
  fail "idle skip not named: $(cat "$T/idle.err0")"
grep -q 'last completed seq' "$T/idle.err0" && fail "the watchdog fired: $(cat "$T/idle.err0")"
grep -q 'is slow' "$T/idle.err0" && fail "idle rank called slow: $(cat "$T/idle.err0")"
[ ! -s "$T/idle.err1" ] || fail "rank 1 reported: $(cat "$T/idle.err1")"
[ $(($(date +%s) - t0)) -lt 15 ] || fail "took too long"
run exited 0 0
grep -q 'rank 1 skipped seq 1 (skip): .*; rank 1 exited after 1 collectives here' "$T/exited.err0" ||
  fail "exited skip not named: $(cat "$T/exited.err0")"
run slow 1500 1
grep -q '^lockstep: rank 0: seq 1 ncclAllReduce on comm [0-9a-f]* waiting [0-9.]* s for rank 1, which is slow (has issued 1 collectives here, still busy); not an error yet' "$T/slow.err0" ||
  fail "busy rank not called slow: $(cat "$T/slow.err0")"
# the skip is named only once it has exited, after the slow note
sed -n '1p' "$T/slow.err0" | grep -q 'is slow' || fail "slow note not first: $(cat "$T/slow.err0")"
grep -q 'rank 1 skipped seq 1 (skip): .*rank 1 exited' "$T/slow.err0" || fail "no skip after exit: $(cat "$T/slow.err0")"
for f in "$T"/idle/*.lstrace; do
  "$LS_DUMP" "$f" | grep -q 'api=lockstep_mismatch' && break
done || fail "no lockstep_mismatch event in the traces"
echo ok
