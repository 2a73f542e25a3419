# The side channel: two live rank processes on one host see their difference at seq 1
# within a watchdog tick, long before any timeout; a consistent pair stays silent and
# the shared files are gone after both exit.
. "$(dirname "$0")/lib.sh"
export LOCKSTEP_ONLINE_DIR="$T/shm" LS_TEST_LINGER_MS=800 LD_LIBRARY_PATH="$LS_FAKECUDA"
mkdir -p -m 700 "$LOCKSTEP_ONLINE_DIR"
run_pair() { # how
  for r in 0 1; do
    RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/$1" LD_PRELOAD="$LS_LIB" \
      "$LS_PROG" diverge "$1" 2> "$T/$1.err$r" &
  done
  wait
}
run_pair op
for r in 0 1; do
  other=$((1 - r))
  grep -Eq "^lockstep: rank $r: seq 1 nccl[A-Za-z]+ on comm [0-9a-f]{16} differs from rank $other \(op-mismatch\): .* here, .* on rank $other\$" "$T/op.err$r" ||
    fail "rank $r did not report the difference: $(cat "$T/op.err$r")"
done
grep -q 'seq 1 ncclAllReduce on comm .* differs from rank 1 (op-mismatch): ncclAllReduce(count=8, dtype=ncclFloat32, redop=ncclSum) at ls_prog_nccl+0x[0-9a-f]* here, ncclBroadcast(count=8, dtype=ncclFloat32, root=0) at ls_prog_nccl+0x[0-9a-f]* on rank 1' "$T/op.err0" ||
  fail "rank 0's description: $(cat "$T/op.err0")"
for f in "$T"/op/*.lstrace; do
  "$LS_DUMP" "$f" | grep -q 'api=lockstep_mismatch .* aux0=1 ' || fail "no mismatch record in $f"
done
run_pair none
[ ! -s "$T/none.err0" ] && [ ! -s "$T/none.err1" ] || fail "consistent pair reported: $(cat "$T"/none.err*)"
[ -z "$(ls "$LOCKSTEP_ONLINE_DIR")" ] || fail "side-channel files left behind: $(ls "$LOCKSTEP_ONLINE_DIR")"
# by default the files live beside the traces (and are gone after a clean exit)
unset LOCKSTEP_ONLINE_DIR
run_pair redop
grep -q 'differs' "$T/redop.err0" || fail "no report with the default directory"
[ -z "$(ls "$T/redop" | grep -v '\.lstrace\(\.idx\)\?$')" ] || fail "left in the trace dir: $(ls "$T/redop")"
# send/recv counts that differ per rank (correct code) must not shift the comparison
for r in 0 1 2; do
  RANK=$r WORLD_SIZE=3 LOCKSTEP_TRACE_DIR="$T/fan" LD_PRELOAD="$LS_LIB" "$LS_PROG" p2pfan 2> "$T/fan.err$r" &
done
wait
cat "$T"/fan.err* | grep . && fail "p2p fan-out reported as a difference"
# LOCKSTEP_ONLINE=0 switches it off
LOCKSTEP_ONLINE=0 run_pair count
[ ! -s "$T/count.err0" ] && [ ! -s "$T/count.err1" ] || fail "LOCKSTEP_ONLINE=0 still reported"
echo ok
