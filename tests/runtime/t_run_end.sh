# `lockstep run`'s default policy (end): once a rank's side channel reported a
# divergence and the watchdog's timeout passed on a call that never completes, the
# rank exits with 87 and says so, long before the job would end by itself (linger
# 20 s). --policy report and a bare LD_PRELOAD keep the job running; `lockstep run`
# then still exits 85, since the command exited 0 after a divergence was reported.
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH="$LS_FAKECUDA" LS_FAKE_CUDA_NEVER=1
pair() { # OUT LINGER_MS [run options]: two ranks of `diverge count` under lockstep run
  out=$1 linger=$2
  shift 2
  "$LS_BIN" run --trace-dir "$T/$out" --timeout 1 "$@" -- sh -c "
    for r in 0 1; do
      ( LS_TEST_LINGER_MS=$linger RANK=\$r WORLD_SIZE=2 '$LS_PROG' diverge count 2> '$T/$out.err'\$r;
        echo \$? > '$T/$out.rc'\$r ) &
    done; wait" 2> "$T/$out.run.err"
}
t0=$(date +%s)
pair end 20000
rc=$?
[ $(($(date +%s) - t0)) -lt 15 ] || fail "policy end took $(($(date +%s) - t0)) s (linger 20 s)"
for r in 0 1; do
  [ "$(cat "$T/end.rc$r")" = 87 ] || fail "rank $r: exit $(cat "$T/end.rc$r"), want 87: $(cat "$T/end.err$r")"
  grep -q "differs from rank $((1 - r)) (count-mismatch)" "$T/end.err$r" || fail "rank $r: no report: $(cat "$T/end.err$r")"
  grep -q "ending this process with exit code 87: the side channel reported a divergence" "$T/end.err$r" ||
    fail "rank $r: no message saying why it ended: $(cat "$T/end.err$r")"
done
[ $rc -eq 85 ] || fail "lockstep run exited $rc after a divergence (want 85: its shell exited 0)"
grep -q "the ranks diverged or hung" "$T/end.run.err" || fail "run's summary: $(cat "$T/end.run.err")"

pair report 3000 --policy report
rc=$?
for r in 0 1; do
  [ "$(cat "$T/report.rc$r")" = 0 ] || fail "report: rank $r exit $(cat "$T/report.rc$r"): $(cat "$T/report.err$r")"
  ! grep -q "ending this process" "$T/report.err$r" || fail "report: rank $r was ended"
done
[ $rc -eq 85 ] || fail "--policy report: lockstep run exited $rc, want 85 (a divergence was reported)"

# Bare LD_PRELOAD: no policy set, today's behaviour (report).
for r in 0 1; do
  ( LOCKSTEP_TIMEOUT=1 LS_TEST_LINGER_MS=3000 RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/bare" \
    LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge count 2> "$T/bare.err$r"; echo $? > "$T/bare.rc$r" ) &
done
wait
for r in 0 1; do
  [ "$(cat "$T/bare.rc$r")" = 0 ] || fail "bare preload: rank $r exit $(cat "$T/bare.rc$r"): $(cat "$T/bare.err$r")"
  grep -q "(count-mismatch)" "$T/bare.err$r" || fail "bare preload: rank $r: no report"
done
echo ok
