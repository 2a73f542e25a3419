# A side channel that cannot be set up never breaks the program: one notice per
# process on stderr, the program's result unchanged, the traces written and
# `lockstep compare` still names the divergence.
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH="$LS_FAKECUDA"
: > "$T/file"
export LOCKSTEP_ONLINE_DIR="$T/file/ch" # under a regular file: cannot be created
for r in 0 1; do
  LS_TEST_LINGER_MS=300 RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/tr" LD_PRELOAD="$LS_LIB" \
    "$LS_PROG" diverge op 2> "$T/err$r" &
done
wait
for r in 0 1; do
  [ "$(wc -l < "$T/err$r")" -eq 1 ] || fail "rank $r: expected one notice: $(cat "$T/err$r")"
  grep -q "^lockstep: online check off: cannot create the side-channel directory $T/file/ch: Not a directory; the trace is still written" "$T/err$r" ||
    fail "rank $r notice: $(cat "$T/err$r")"
done
[ "$(ls "$T/tr"/*.lstrace | wc -l)" -eq 2 ] || fail "traces missing"
"$LS_BIN" compare "$T/tr" > "$T/cmp" 2>&1; [ $? -eq 1 ] || fail "compare: $(cat "$T/cmp")"
grep -q 'op-mismatch' "$T/cmp" || fail "compare did not name the op-mismatch: $(cat "$T/cmp")"
echo ok
