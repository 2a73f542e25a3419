# LOCKSTEP_DEVICE=0: no driver call at all (libcuda is never even loaded), collectives
# flagged nodevice; the same never-completing program with tracking on is reported.
. "$(dirname "$0")/lib.sh"
LOCKSTEP_DEVICE=0 LOCKSTEP_TIMEOUT=1 LS_FAKE_CUDA_NEVER=1 LS_FAKE_CUDA_COUNT="$T/count" \
  LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 2500 1000 2> "$T/err" || fail "loop failed"
[ ! -e "$T/count" ] || fail "driver loaded with LOCKSTEP_DEVICE=0: $(cat "$T/count")"
[ ! -s "$T/err" ] || fail "watchdog fired without device tracking: $(cat "$T/err")"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail dump
n=$(grep '^rec .* api=ncclAllReduce ' "$T/dump" | grep -c ' fl=[a-z,]*nodevice')
[ "$n" -eq 2500 ] || fail "expected 2500 allreduce records flagged nodevice, got $n"
rm -f "$f"
LOCKSTEP_TIMEOUT=1 LS_FAKE_CUDA_NEVER=1 LS_FAKE_CUDA_COUNT="$T/count" \
  LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 2500 1000 2> "$T/err" || fail "tracked loop failed"
grep -q 'not complete after' "$T/err" || fail "tracked hang not reported: $(cat "$T/err")"
rec=$(awk '$1 == "cuEventRecord" { print $2 }' "$T/count")
[ -n "$rec" ] && [ "$rec" -ge 1 ] || fail "tracked run recorded no event: '$rec'"
echo ok
