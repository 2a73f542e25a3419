# A full trace never blocks the program: records past LOCKSTEP_TRACE_CAPACITY are
# dropped and LS_TRACE_F_PARTIAL is set.
. "$(dirname "$0")/lib.sh"
LOCKSTEP_TRACE_CAPACITY=16 LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 100 || fail "program failed"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail "dump failed"
grep -Eq '^header .* nrecords=101 capacity=16 flags=0x1?3 ' "$T/dump" || fail "$(head -1 "$T/dump")"
[ "$(grep -c '^rec .* state=2 ' "$T/dump")" -eq 16 ] || fail "expected 16 intact records"
echo ok
