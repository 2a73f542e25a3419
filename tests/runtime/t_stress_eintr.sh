# Item 3, the part a signal storm cannot force on every kernel: fallocate interrupted by
# a signal (EINTR, which fallocate(2) allows) while the recorder reserves disk blocks.
# It used to be taken for a full disk: at the first call recording was switched off
# ("cannot reserve space"), later the records past the reserved blocks were dropped.
# With every other fallocate interrupted, the trace must be complete and stderr silent.
. "$(dirname "$0")/lib.sh"
if [ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]; then
  echo "sanitizer build: the shim must come before the sanitizer runtime: skipped"
  exit 77
fi
LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_EINTRSHIM:$LS_LIB" LOCKSTEP_TRACE_CAPACITY=70000 \
  "$LS_PROG" threads 8 2000 2> "$T/err" || fail "program failed: $(cat "$T/err")"
[ -s "$T/err" ] && fail "unexpected stderr: $(head -3 "$T/err")"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail "trace does not parse"
grep -q '^header .* hflags=clean ' "$T/dump" || fail "trace partial: $(head -1 "$T/dump")"
# per thread: 1 init + 1800 allreduce + 200 x (start, send, recv, end) + 1 destroy
[ "$(grep -c '^rec .* state=2 ' "$T/dump")" -eq $((8 * 2602)) ] || fail "records missing"
echo ok
