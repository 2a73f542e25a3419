# Device completion: an event is recorded after the outermost ncclGroupEnd returns
# (never while the group is open) and after each ungrouped collective; the watchdog
# marks the covered calls complete. Uses the fake libcuda's record log.
. "$(dirname "$0")/lib.sh"
LS_FAKE_CUDA_LOG="$T/cuda.log" LS_TEST_SLEEP_US=3000 LOCKSTEP_POLL_MS=1 \
  LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$LS_PROG" threads 1 40 ||
  fail "program failed"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail "dump failed"
# 36 allreduce + 4 groups of (send, recv) = 40 events
[ "$(wc -l < "$T/cuda.log")" -eq 40 ] || fail "expected 40 event records, got $(wc -l < "$T/cuda.log")"
# no event time falls inside an open group: [GroupStart enter, GroupEnd exit]
awk '/^rec/ && /api=ncclGroupStart/ { for (i=1;i<=NF;i++) if ($i ~ /^enter=/) { split($i,a,"="); s=a[2] } }
     /^rec/ && /api=ncclGroupEnd/ { for (i=1;i<=NF;i++) if ($i ~ /^exit=/) { split($i,a,"="); print s, a[2] } }' \
  "$T/dump" > "$T/groups"
[ "$(wc -l < "$T/groups")" -eq 4 ] || fail "expected 4 groups"
while read -r lo hi; do
  awk -v lo="$lo" -v hi="$hi" '$3 >= lo && $3 <= hi { bad=1 } END { exit bad }' "$T/cuda.log" ||
    fail "an event was recorded inside a group ($lo..$hi)"
done < "$T/groups"
# every sequenced call except possibly the last few has EVENT_RECORDED and COMPLETED
n=$(grep '^rec' "$T/dump" | grep -v 'seq=-' | grep -c ' fl=[a-z,]*event,complete')
[ "$n" -ge 36 ] || fail "only $n of 44 calls observed complete"
# in-group calls carry IN_GROUP (0x10) and depth 1
grep 'api=ncclSend' "$T/dump" | grep -qv 'depth=1 ' && fail "send outside depth 1"
echo ok
