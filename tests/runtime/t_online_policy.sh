# LOCKSTEP_POLICY applies to an online mismatch as to a hang: exit ends the rank with
# lockstep's code 86 right after the report, long before the watchdog (20 s). (abort,
# and exit across hosts: t_online_abort.sh; with Open MPI: t_online_xhost_mpi.sh.)
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH="$LS_FAKECUDA" LOCKSTEP_TIMEOUT=20
t0=$(date +%s)
for r in 0 1; do
  ( LOCKSTEP_POLICY=exit LS_TEST_LINGER_MS=10000 RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/x" \
    LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge count 2> "$T/x.err$r"; echo $? > "$T/x.rc$r" ) &
done
wait
for r in 0 1; do
  [ "$(cat "$T/x.rc$r")" = 86 ] || fail "rank $r: exit code $(cat "$T/x.rc$r"), expected 86: $(cat "$T/x.err$r")"
  grep -q "seq 1 ncclAllReduce on comm [0-9a-f]* differs from rank $((1 - r)) (count-mismatch): ncclAllReduce(count=" "$T/x.err$r" ||
    fail "rank $r: no count-mismatch report: $(cat "$T/x.err$r")"
done
[ $(($(date +%s) - t0)) -lt 8 ] || fail "policy exit took $(($(date +%s) - t0)) s (linger 10 s)"
echo ok
