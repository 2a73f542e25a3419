# One watchdog line per hang: two stuck calls on communicator A give one line (its
# oldest, seq 0), a later stuck call on communicator B gives its own.
. "$(dirname "$0")/lib.sh"
LOCKSTEP_TIMEOUT=1 LS_FAKE_CUDA_NEVER=1 LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" \
  "$LS_PROG" hang2 2> "$T/err" || fail "program failed"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail dump
a=$(grep 'api=ncclCommInitRank' "$T/dump" | sed -n 1p | kv comm)
b=$(grep 'api=ncclCommInitRank' "$T/dump" | sed -n 2p | kv comm)
[ "$(wc -l < "$T/err")" -eq 2 ] || fail "expected 2 lines: $(cat "$T/err")"
sed -n 1p "$T/err" | grep -Eq "^lockstep: rank 0: seq 0 ncclAllReduce on comm $a not complete after [1-9]\.[0-9] s; last completed seq none\$" ||
  fail "first line: $(cat "$T/err")"
sed -n 2p "$T/err" | grep -Eq "^lockstep: rank 0: seq 0 ncclAllReduce on comm $b not complete after [1-9]\.[0-9] s; last completed seq none\$" ||
  fail "second line: $(cat "$T/err")"
[ "$(grep -c 'api=lockstep_watchdog' "$T/dump")" -eq 2 ] || fail "expected two watchdog records"
echo ok
