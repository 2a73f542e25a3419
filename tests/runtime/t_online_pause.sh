# lockstep_online_set_enabled: while paused a rank publishes no fingerprint (the
# trace still records every call), divergent calls inside a pause are not reported,
# the numbering lines up again after it, a divergence after resuming is reported at
# its trace seq, and ranks that pause at different calls get a note, not a report.
. "$(dirname "$0")/lib.sh"
export LOCKSTEP_ONLINE_DIR="$T/shm" LOCKSTEP_ONLINE_STATS=1 LD_LIBRARY_PATH="$LS_FAKECUDA"
mkdir -p -m 700 "$LOCKSTEP_ONLINE_DIR"
P=$LS_PAUSE_PROG
run_pair() { # scenario [tag: each rank on its own simulated host, through the logs]
  n=$1${2:+-$2}
  for r in 0 1; do
    h=; [ -n "${2:-}" ] && h=host$r
    RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/$n" LOCKSTEP_ONLINE_HOST=$h LD_PRELOAD="$LS_LIB" \
      "$P" "$1" > "$T/$n.out$r" 2> "$T/$n.err$r" &
  done
  wait
  for r in 0 1; do
    [ ! -s "$T/$n.out$r" ] || fail "$n: rank $r printed: $(cat "$T/$n.out$r")"
  done
}
# 1. paused: 3 + 3 published, 5 paused (rank 1's count-9 calls among them), silent
run_pair paused
for r in 0 1; do
  grep -Eq "^lockstep: rank $r: online: comm [0-9a-f]{16}: 6 collectives published, 5 paused\$" \
    "$T/paused.err$r" || fail "paused: rank $r counts: $(cat "$T/paused.err$r")"
  [ "$(grep -vc ': online: comm ' "$T/paused.err$r")" -eq 0 ] ||
    fail "paused: rank $r reported: $(cat "$T/paused.err$r")"
done
# the recorder kept recording: 11 all-reduces in each trace, the paused ones included
for f in "$T"/paused/*.lstrace; do
  n=$("$LS_DUMP" "$f" | grep -c 'api=ncclAllReduce ')
  [ "$n" -eq 11 ] || fail "paused: $n all-reduces recorded in $f, expected 11"
done
# 2. resume: the count difference right after the pause is named at trace seq 6
run_pair resume
for r in 0 1; do
  other=$((1 - r))
  grep -Eq "^lockstep: rank $r: seq 6 ncclAllReduce on comm [0-9a-f]{16} differs from rank $other \(count-mismatch\): " \
    "$T/resume.err$r" || fail "resume: rank $r did not report seq 6: $(cat "$T/resume.err$r")"
  grep -Eq ": 4 collectives published, 4 paused\$" "$T/resume.err$r" ||
    fail "resume: rank $r counts: $(cat "$T/resume.err$r")"
done
# ... and across (simulated) hosts, where fingerprints travel through the logs
run_pair resume xhost
grep -Eq "^lockstep: rank [01]: seq 6 ncclAllReduce on comm [0-9a-f]{16} differs from rank [01] \(count-mismatch\): " \
  "$T"/resume-xhost.err0 "$T"/resume-xhost.err1 ||
  fail "resume across hosts: no report at seq 6: $(cat "$T"/resume-xhost.err*)"
cat "$T"/resume-xhost.err* | grep -v ': online: comm ' | grep -v 'seq 6 ' | grep . &&
  fail "resume across hosts: other lines: $(cat "$T"/resume-xhost.err*)"
# 3. apart: pauses at different calls are told apart from a divergence
run_pair apart
cat "$T"/apart.err* | grep -q differs && fail "apart: reported as a difference: $(cat "$T"/apart.err*)"
cat "$T"/apart.err* | grep -Eq "^lockstep: rank [01]: seq [0-9]+ on comm [0-9a-f]{16}: rank [01] paused its online check at other calls than this rank" ||
  fail "apart: no note: $(cat "$T"/apart.err*)"
# 4. the return values, and -1 where there is nothing to pause
out=$(LD_PRELOAD="$LS_LIB" LOCKSTEP_TRACE_DIR="$T/api" "$P" api) || fail "api: exit $?"
[ "$out" = "toggle: 1 0 0 1" ] || fail "api: $out"
out=$(LOCKSTEP_ONLINE=0 LD_PRELOAD="$LS_LIB" LOCKSTEP_TRACE_DIR="$T/api0" "$P" api) || fail "api0: exit $?"
[ "$out" = "toggle: -1 -1 -1 -1" ] || fail "LOCKSTEP_ONLINE=0: $out"
out=$("$P" api) || fail "no lockstep: exit $?"
[ "$out" = "toggle: absent" ] || fail "no lockstep: $out"
[ -z "$(ls "$LOCKSTEP_ONLINE_DIR")" ] || fail "side-channel files left behind: $(ls "$LOCKSTEP_ONLINE_DIR")"
echo ok
