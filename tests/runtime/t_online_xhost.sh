# The side channel across hosts, simulated on one machine: LOCKSTEP_ONLINE_HOST gives
# each rank its own host key, so the ranks do not share a mapped file and meet only
# through their logs in the shared directory (the NFS transport). A mismatch is named
# on both "hosts" within a bounded time of the second rank's call; a skip is called
# from the remote rank's logged status; without the logs (LOCKSTEP_ONLINE_CROSSHOST=0)
# nothing is said, which shows the hosts really are apart; a directory that is not
# shared is said once; the logs are gone after a clean exit.
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH="$LS_FAKECUDA" LOCKSTEP_ONLINE_DIR="$T/ch" LOCKSTEP_ONLINE_TIMESTAMPS=1
mkdir -m 700 "$T/ch"
run_pair() { # name how [linger-ms]
  for r in 0 1; do
    LOCKSTEP_ONLINE_HOST=host$r LS_TEST_LINGER_MS=${3:-1500} RANK=$r WORLD_SIZE=2 \
      LOCKSTEP_TRACE_DIR="$T/$1" LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge "$2" 2> "$T/$1.err$r" &
  done
  wait
}
# seconds (decimal) of the later rank's call at seq 1, from the traces
entered() {
  for f in "$T/$1"/*.lstrace; do
    "$LS_DUMP" "$f" | sed -n 's/.* seq=1 .* enter=\([0-9]*\) .*/\1/p'
  done | sort -n | tail -1
}
for how in op count; do
  run_pair "$how" "$how"
  for r in 0 1; do
    grep -Eq "^lockstep: rank $r: seq 1 nccl[A-Za-z]+ on comm [0-9a-f]{16} differs from rank $((1 - r)) \($how-mismatch\): .* on rank $((1 - r)) \[t=[0-9.]+\]\$" "$T/$how.err$r" ||
      fail "$how: rank $r did not name the difference across hosts: $(cat "$T/$how.err$r")"
  done
  t_call=$(entered "$how")
  [ -n "$t_call" ] || fail "$how: no seq 1 in the traces"
  # latency from the second call to each report: two poll periods (50 ms) plus ticks;
  # 1 s leaves room for a loaded 2-core CI machine
  for r in 0 1; do
    t_rep=$(sed -n 's/.*\[t=\([0-9.]*\)\]$/\1/p' "$T/$how.err$r" | head -1)
    ms=$(awk -v a="$t_rep" -v b="$t_call" 'BEGIN { printf "%d", (a - b / 1e9) * 1000 }')
    echo "$how: rank $r named it $ms ms after the second call"
    [ "$ms" -lt 1000 ] || fail "$how: rank $r took $ms ms"
  done
done
[ -z "$(ls "$T/ch")" ] || fail "files left in the channel directory: $(ls "$T/ch")"
# the hosts really are apart: without the logs nobody compares
LOCKSTEP_ONLINE_CROSSHOST=0 run_pair apart op 600
cat "$T"/apart.err* | grep -q differs && fail "compared without the logs: $(cat "$T"/apart.err*)"
# a directory each host keeps to itself (not shared): the other host's rank never
# shows up; each rank says so once, after 10 s, and nothing else
for r in 0 1; do
  mkdir -m 700 "$T/own$r"
  LOCKSTEP_ONLINE_DIR="$T/own$r" LOCKSTEP_ONLINE_HOST=host$r LS_TEST_LINGER_MS=12500 RANK=$r \
    WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/unshared" LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge op \
    2> "$T/unshared.err$r" &
done
wait
for r in 0 1; do
  [ "$(wc -l < "$T/unshared.err$r")" -eq 1 ] &&
    grep -Eq "^lockstep: rank $r: online: rank $((1 - r)) of comm [0-9a-f]{16} not seen on the side channel after 10 s \(on another host, with $T/own$r not shared between the hosts, or another LOCKSTEP_JOB_SECRET there\?\); it is compared through the traces only" "$T/unshared.err$r" ||
    fail "unshared directory: rank $r: $(cat "$T/unshared.err$r")"
done
# skip: rank 0's seq 1 never completes (device), rank 1 never issues it and goes idle,
# then exits: named from rank 1's logged status, long before the 20 s watchdog
LS_FAKE_CUDA_NEVER=1 LOCKSTEP_TIMEOUT=20 LOCKSTEP_SKIP_MS=300 LOCKSTEP_ONLINE_HOST=host0 \
  LS_TEST_LINGER_MS=3000 RANK=0 WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/skip" LD_PRELOAD="$LS_LIB" \
  "$LS_PROG" diverge skip 2> "$T/skip.err0" &
LOCKSTEP_SKIP_MS=300 LOCKSTEP_ONLINE_HOST=host1 LS_TEST_LINGER_MS=2000 RANK=1 WORLD_SIZE=2 \
  LOCKSTEP_TRACE_DIR="$T/skip" LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge skip 2> "$T/skip.err1"
wait
grep -Eq '^lockstep: rank 0: seq 1 ncclAllReduce on comm [0-9a-f]{16}: rank 1 skipped seq 1 \(skip\): .* not complete after [0-9.]+ s; rank 1 returned from everything after 1 collectives here' "$T/skip.err0" ||
  fail "skip across hosts not named: $(cat "$T/skip.err0")"
grep -q 'last completed seq' "$T/skip.err0" && fail "the watchdog fired: $(cat "$T/skip.err0")"
echo ok
