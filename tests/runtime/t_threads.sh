# Concurrent threads on separate communicators: every record is intact and each
# communicator's sequence is 0..N-1 exactly once.
. "$(dirname "$0")/lib.sh"
LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$LS_PROG" threads 8 500 || fail "program failed"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail "dump failed (corrupt trace)"
# per thread: 1 init + 450 allreduce + 50 x (start, send, recv, end) + 1 destroy = 652
[ "$(grep -c '^rec .* state=2 ' "$T/dump")" -eq $((8 * 652)) ] || fail "wrong number of complete records"
[ "$(grep -c '^rec' "$T/dump")" -eq $((8 * 652)) ] || fail "extra records"
grep '^rec' "$T/dump" | grep -v 'seq=-' | awk '{ for (i=1;i<=NF;i++) { split($i,a,"="); v[a[1]]=a[2] } print v["comm"], v["seq"], v["tid"] }' |
  sort -k1,1 -k2,2n > "$T/seqs"
[ "$(cut -d' ' -f1 "$T/seqs" | sort -u | wc -l)" -eq 8 ] || fail "expected 8 communicators"
awk '{ if ($1 != c) { c = $1; want = 0; tid = $3 } if ($2 != want || $3 != tid) { print "bad", $0; exit 1 } want++ }
     END { }' "$T/seqs" || fail "sequence numbers not contiguous per communicator"
[ "$(wc -l < "$T/seqs")" -eq $((8 * 550)) ] || fail "expected 550 sequenced calls per communicator"
echo ok
