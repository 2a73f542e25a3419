# LOCKSTEP_DEFER_US: a dense loop records about one event per bound (1 ms or 1024 calls)
# instead of one per call, every call is still covered by a later event except at most
# the last bound's worth, and a hang is still reported (deferred calls stay pending).
. "$(dirname "$0")/lib.sh"
LOCKSTEP_DEFER_US=1000 LOCKSTEP_POLL_MS=1 LS_FAKE_CUDA_COUNT="$T/count" \
  LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 20000 || fail "loop failed"
rec=$(awk '$1 == "cuEventRecord" { print $2 }' "$T/count")
[ -n "$rec" ] && [ "$rec" -ge 1 ] && [ "$rec" -le 200 ] || fail "expected 1..200 event records for 20000 calls, got '$rec'"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail dump
n=$(grep -c '^rec .* api=ncclAllReduce ' "$T/dump")
[ "$n" -eq 20000 ] || fail "expected 20000 allreduce records, got $n"
ev=$(grep '^rec .* api=ncclAllReduce ' "$T/dump" | grep -c ' fl=[a-z,]*event')
[ "$ev" -eq 20000 ] || fail "every call waits for an event: $ev of 20000 flagged"
done=$(grep '^rec .* api=ncclAllReduce ' "$T/dump" | grep -c ' fl=[a-z,]*complete')
[ "$done" -ge $((20000 - 1024)) ] || fail "only $done of 20000 observed complete"
rm -f "$f"
# No event ever completes: the first call is reported once, although most calls recorded none.
LOCKSTEP_DEFER_US=1000 LOCKSTEP_TIMEOUT=1 LS_FAKE_CUDA_NEVER=1 LD_LIBRARY_PATH="$LS_FAKECUDA" \
  LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 2500 1000 2> "$T/err" || fail "hang loop failed"
grep -Eq '^lockstep: rank 0: seq 0 ncclAllReduce on comm [0-9a-f]+ not complete after [1-9]\.[0-9] s; last completed seq none$' "$T/err" ||
  fail "hang not reported: $(cat "$T/err")"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "expected one line: $(cat "$T/err")"
echo ok
