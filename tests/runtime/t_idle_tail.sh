# A burst of collectives, then the program idles past LOCKSTEP_TIMEOUT with every call done
# on the device. With an event per call (the default) nothing is reported and every call is
# seen complete. With LOCKSTEP_DEFER_US the burst's later calls wait for an event no call
# ever records, so the idle program is reported as hung: the limit that keeps deferral
# opt-in (runtime/README.md). If that part starts failing, deferral closed the hole: make
# it the default's candidate and update the README.
. "$(dirname "$0")/lib.sh"
export LOCKSTEP_TIMEOUT=1 LOCKSTEP_POLL_MS=1 LS_FAKE_CUDA_DELAY_MS=50 LS_TEST_LINGER_MS=2500
LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 200 2> "$T/err" || fail "loop failed"
[ ! -s "$T/err" ] || fail "an idle program was reported: $(cat "$T/err")"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail dump
done=$(grep '^rec .* api=ncclAllReduce ' "$T/dump" | grep -c ' fl=[a-z,]*complete')
[ "$done" -eq 200 ] || fail "expected all 200 calls seen complete, got $done"
rm -f "$f"
LOCKSTEP_DEFER_US=1000000 LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 200 2> "$T/err" ||
  fail "deferred loop failed"
grep -Eq '^lockstep: rank 0: seq [0-9]+ ncclAllReduce on comm [0-9a-f]+ not complete after' "$T/err" ||
  fail "deferred: the idle tail was not reported (has the hole been closed?): $(cat "$T/err")"
echo ok
