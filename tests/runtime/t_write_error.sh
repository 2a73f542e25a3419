# The commands' write-error policy (cli/main.c, ls_json_print): output that
# never reaches its file ends the command with exit 2 and a line saying so, never
# status 0 with a truncated document (CI once fed stress_check.py such an export from
# an ASan run: a Python traceback instead of a check). /dev/full fails every write with
# ENOSPC, as a full disk does. The helpers that write the stress tests' other inputs
# (trace_dump, stress_nccl's LS_STRESS_LOG) fail the same way.
. "$(dirname "$0")/lib.sh"
if [ ! -c /dev/full ] || (echo x > /dev/full) 2> /dev/null; then
  echo "no /dev/full: skipped"
  exit 77
fi
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge count || fail "rank $r failed"
done
check() { # expected-status-when-written args...
  want=$1
  shift
  "$LS_BIN" "$@" > "$T/out" 2> "$T/err"
  st=$?
  [ $st -eq "$want" ] || fail "$*: exit $st writing a file: $(head -c 400 "$T/err")"
  "$LS_BIN" "$@" > /dev/full 2> "$T/err"
  st=$?
  [ $st -eq 2 ] && grep -q '^lockstep: standard output: write failed' "$T/err" ||
    fail "$*: exit $st writing to a full disk: $(head -c 400 "$T/err")"
}
each_document_command check
"$LS_BIN" trace export -o /dev/full "$LOCKSTEP_TRACE_DIR" 2> "$T/err"
st=$?
[ $st -eq 2 ] && grep -q '^lockstep: /dev/full: write failed: No space left on device' "$T/err" ||
  fail "trace export -o: exit $st writing to a full disk: $(head -c 400 "$T/err")"

f=$(ls "$LOCKSTEP_TRACE_DIR"/*.lstrace | head -1)
"$LS_DUMP" "$f" > "$T/dump" || fail "dump to a file failed"
"$LS_DUMP" "$f" > /dev/full 2> "$T/err"
st=$?
[ $st -eq 2 ] && grep -q 'cannot write the dump' "$T/err" || fail "trace_dump: exit $st writing to a full disk: $(cat "$T/err")"
LS_STRESS_LOG="$T/log" "$LS_STRESS" threads 4 2 20 > /dev/null || fail "stress program failed writing its log"
LS_STRESS_LOG=/dev/full "$LS_STRESS" threads 4 2 20 > /dev/null 2> "$T/err"
st=$?
[ $st -eq 1 ] && grep -q 'cannot write /dev/full: No space left on device' "$T/err" ||
  fail "stress_nccl: exit $st writing its log to a full disk: $(cat "$T/err")"
echo ok
