# Streams under CUDA graph capture get no completion event (it would be captured into
# the graph and never complete here), so the watchdog must stay silent for them.
. "$(dirname "$0")/lib.sh"
LOCKSTEP_TIMEOUT=1 LS_FAKE_CUDA_CAPTURING=1 LS_FAKE_CUDA_NEVER=1 \
  LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$LS_PROG" hang 2 2> "$T/err" || fail "program failed"
[ ! -s "$T/err" ] || fail "watchdog fired on a capturing stream: $(cat "$T/err")"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail dump
grep 'api=ncclAllReduce' "$T/dump" | grep -q ' fl=-' || fail "a capturing stream's call got flags: $(grep ncclAllReduce "$T/dump")"
echo ok
