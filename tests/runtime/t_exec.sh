# A recording process that execs another recording program keeps its pid: the second
# image must get its own trace file, not lose its records to the first one's name.
. "$(dirname "$0")/lib.sh"
LD_PRELOAD="$LS_LIB" "$LS_PROG" exec "$LS_PROG" basic 2> "$T/err" || fail "program failed: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "stderr: $(cat "$T/err")"
[ "$(ls "$LOCKSTEP_TRACE_DIR" | grep -c '\.lstrace$')" -eq 2 ] || fail "expected two traces: $(ls "$LOCKSTEP_TRACE_DIR")"
ls "$LOCKSTEP_TRACE_DIR" | grep -q -- '-1\.lstrace$' || fail "second image's file not suffixed"
for f in "$LOCKSTEP_TRACE_DIR"/*.lstrace; do "$LS_DUMP" "$f" > /dev/null || fail "dump $f"; done
echo ok
