# The watchdog's back-off: with nothing due it sleeps longer than LOCKSTEP_POLL_MS, yet no
# call goes unwatched (a burst after an idle spell wakes it when a ring fills half way),
# and a hang after an idle spell is still reported on time. The online check ticks every
# interval (it has peers to answer), so these run with LOCKSTEP_ONLINE=0.
. "$(dirname "$0")/lib.sh"
export LOCKSTEP_ONLINE=0 LOCKSTEP_DEVICE_STATS=1 LD_LIBRARY_PATH="$LS_FAKECUDA"
ticks() { sed -n 's/^lockstep: device: .*, \([0-9]*\) ticks$/\1/p' "$1"; }
unwatched() { sed -n 's/^lockstep: device: .*, \([0-9]*\) unwatched (ring full).*/\1/p' "$1"; }
# idle 1.5 s after one call: 150 ticks at 10 ms; backed off, about 8
LS_TEST_LINGER_MS=1500 LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 1 2> "$T/idle" || fail "idle run failed"
n=$(ticks "$T/idle")
[ -n "$n" ] && [ "$n" -lt 40 ] || fail "no back-off while idle: $(cat "$T/idle")"
rm -f "$LOCKSTEP_TRACE_DIR"/*
# 1.5 s idle (the thread asleep up to 1.28 s), then 3000 calls ~60-100 us apart: 1024
# events in flight after ~0.1 s, so a sleeping poller that is not woken loses calls
LD_PRELOAD="$LS_LIB" "$LS_PROG" idleburst 1500 3000 1 2> "$T/burst" || fail "burst run failed"
[ "$(unwatched "$T/burst")" = 0 ] || fail "calls went unwatched under back-off: $(cat "$T/burst")"
"$LS_DUMP" "$(one_trace)" > "$T/dump" || fail dump
n=$(grep -c '^rec .* api=ncclAllReduce ' "$T/dump")
done=$(grep '^rec .* api=ncclAllReduce ' "$T/dump" | grep -c ' fl=[a-z,]*complete')
[ "$n" -eq 3001 ] && [ "$done" -eq 3001 ] || fail "expected 3001 calls all observed complete, got $done of $n"
rm -f "$LOCKSTEP_TRACE_DIR"/*
# only the first event completes: the call after the idle spell hangs, reported after
# LOCKSTEP_TIMEOUT plus at most a backed-off sleep (<= timeout / 4)
LOCKSTEP_TIMEOUT=1 LS_FAKE_CUDA_COMPLETE_FIRST=1 LS_TEST_LINGER_MS=2500 LD_PRELOAD="$LS_LIB" \
  "$LS_PROG" idleburst 1500 1 0 2> "$T/hang" || fail "hang run failed"
grep -Eq '^lockstep: rank 0: seq 1 ncclAllReduce on comm [0-9a-f]+ not complete after 1\.[0-3] s; last completed seq 0$' "$T/hang" ||
  fail "hang after an idle spell not reported on time: $(cat "$T/hang")"
echo ok
