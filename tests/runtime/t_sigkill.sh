# A SIGKILL loses nothing already recorded: kill -9 a rank mid-run, then every
# record up to the last one is intact and the sequence has no hole.
. "$(dirname "$0")/lib.sh"
LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 100000000 100 &
pid=$!
sleep 1
kill -9 $pid
wait $pid 2>/dev/null
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail "the killed rank's trace does not parse"
grep -Eq '^header .* flags=0x(0|10) ' "$T/dump" || fail "flags should show no clean exit"
n=$(grep -c '^rec .* api=ncclAllReduce ' "$T/dump")
[ "$n" -ge 100 ] || fail "only $n records survived"
grep '^rec .* api=ncclAllReduce ' "$T/dump" | kv seq | awk '$1 != NR-1 { exit 1 }' || fail "hole in the sequence"
# all but the last call returned; counts match the loop index (count = i)
grep '^rec .* api=ncclAllReduce ' "$T/dump" | head -n $((n - 1)) | grep -v ' state=2 ' && fail "a returned call lost its state"
grep '^rec .* api=ncclAllReduce ' "$T/dump" | awk '{ for (i=1;i<=NF;i++) { split($i,a,"="); v[a[1]]=a[2] } if (v["count"] != v["seq"]) exit 1 }' ||
  fail "a record's fields are torn"

# the digest index beside it survives too, covers most of what was recorded, and compare reads
# the records only for what it does not cover
[ -s "$f.idx" ] || fail "no digest index beside the killed rank's trace"
LOCKSTEP_COMPARE_STATS=1 "$LS_BIN" compare "$f" > /dev/null 2> "$T/stats"
grep -q ': 1 of 1 traces by their index' "$T/stats" || fail "compare did not take the index: $(cat "$T/stats")"
read_n=$(sed -n 's/.*summaries read \([0-9]*\),.*/\1/p' "$T/stats")
[ -n "$read_n" ] && [ "$read_n" -lt $((n / 2)) ] || fail "the index covered too little of $n calls: $(cat "$T/stats")"
echo ok
