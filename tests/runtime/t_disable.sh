# LOCKSTEP_DISABLE=1 turns everything off: no file, no thread, same results.
. "$(dirname "$0")/lib.sh"
plain=$("$LS_PROG" rc 2>&1)
off=$(LOCKSTEP_DISABLE=1 LD_PRELOAD="$LS_LIB" "$LS_PROG" rc 2>&1) || fail "exited $?"
[ "$plain" = "$off" ] || fail "results differ"
[ ! -e "$LOCKSTEP_TRACE_DIR" ] || fail "a trace was written while disabled"
echo ok
