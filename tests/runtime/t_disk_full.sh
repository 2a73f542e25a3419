# A full disk under the trace directory: records are dropped (partial), never a
# SIGBUS in the program. Needs a small tmpfs (root with mount rights), else skipped.
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/small"
mount -t tmpfs -o size=4m tmpfs "$T/small" 2>/dev/null || { echo "cannot mount a tmpfs: skipped"; exit 77; }
trap 'umount "$T/small"' EXIT
LOCKSTEP_TRACE_DIR="$T/small/t" LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 100000 2> "$T/err"
code=$?
[ $code -eq 0 ] || fail "program died with $code (SIGBUS is 135): $(cat "$T/err")"
f=$(one_trace "$T/small/t")
"$LS_DUMP" "$f" > "$T/dump" || fail dump
grep -q '^header .* nrecords=100001 .* hflags=partial,clean ' "$T/dump" || fail "$(head -1 "$T/dump")"
n=$(grep -c ' state=2 ' "$T/dump")
[ "$n" -ge 10000 ] || fail "only $n records kept on a 4 MiB disk"
# what was kept is a clean prefix: seq 0..n-2 after the init record
grep '^rec .* api=ncclAllReduce ' "$T/dump" | kv seq | awk '$1 != NR-1 { exit 1 }' || fail "kept records are not a prefix"
echo ok
