# The out-of-memory policy of lockstep's commands (common/xalloc.h): wherever a
# realloc in lint, compare or trace export fails, the command ends with exit 2 and a
# line saying "out of memory" — never a crash, a hang or a half-written result with
# status 0. The fail_realloc shim fails the n-th realloc made by the lockstep binary
# itself (and every one after it), for n spread over all the calls a run makes.
. "$(dirname "$0")/lib.sh"
if [ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]; then
  echo "sanitizer build: its allocator replaces realloc, the shim cannot: skipped"
  exit 77
fi
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge count || fail "rank $r failed"
done
check() { # expected-normal-status args...
  want=$1
  shift
  timeout 60 env LS_FAIL_REALLOC_COUNT=1 LD_PRELOAD="$LS_FAILREALLOC" "$LS_BIN" "$@" > /dev/null 2> "$T/count.err"
  st=$?
  [ $st -eq "$want" ] || fail "$*: exit $st without failures: $(cat "$T/count.err")"
  n=$(sed -n 's/^fail_realloc: \([0-9]*\) calls$/\1/p' "$T/count.err")
  [ -n "$n" ] && [ "$n" -gt 0 ] || fail "$*: the shim saw no realloc"
  for at in $(awk -v n="$n" 'BEGIN { for (i = 0; i < n && i < 25; i++) print i; for (k = 1; k < 20; k++) print int(n * k / 20) }' | sort -nu); do
    timeout 60 env LS_FAIL_REALLOC_AT=$at LD_PRELOAD="$LS_FAILREALLOC" "$LS_BIN" "$@" > "$T/out" 2> "$T/err"
    st=$?
    [ $st -eq 2 ] && grep -q 'out of memory' "$T/err" ||
      fail "$*: realloc #$at failing gave exit $st: $(head -c 400 "$T/err")"
  done
  echo "$*: $n reallocs, each failure handled"
}
each_document_command check
echo ok
