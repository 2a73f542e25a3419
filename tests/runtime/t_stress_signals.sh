# Stress item 3: a signal storm during calls — SIGALRM from setitimer every 100 us (a
# handler that only counts) and SIGUSR1 at each thread in turn every 20 us (a handler
# that calls write()), no SA_RESTART, from before the first NCCL call on. Results must
# be exactly what the stand-in returned (no EINTR leaking in), the trace must hold every
# call, and the watchdog (which blocks signals) must neither fire falsely nor miss a
# real hang while the storm goes on. The trace goes to tmpfs when there is one, where
# fallocate can be interrupted.
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || { echo "no python3: skipped"; exit 77; }
D="$T"
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  D=$(mktemp -d /dev/shm/lockstep-stress.XXXXXX) || fail "mktemp"
  trap 'rm -rf "$D"' EXIT
fi
export LOCKSTEP_TRACE_DIR="$D/traces" LS_STANDIN_DELAY_US=20 LOCKSTEP_TIMEOUT=1
export LS_STANDIN_FAIL_MOD=5 LS_STANDIN_FAIL_RC=3 # ncclInternalError on every 5th count
timeout 60 "$LS_STRESS" signals 8 1500 > "$T/plain" 2> "$T/plain.err" || fail "plain run failed: $(cat "$T/plain.err")"
LS_STRESS_LOG="$T/log" LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" timeout 60 \
  "$LS_STRESS" signals 8 1500 > "$T/pre" 2> "$T/pre.err" || fail "preloaded run failed: $(cat "$T/pre.err")"
[ -s "$T/pre.err" ] && fail "unexpected stderr under the recorder: $(head -5 "$T/pre.err")"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail "trace does not parse"
grep -q '^header .* hflags=clean ' "$T/dump" || fail "expected a clean trace (no partial, no watchdog): $(head -1 "$T/dump")"
python3 "$LS_STRESS_CHECK" "$T/dump" "$T/log" || fail "trace does not match the calls"
cat "$T/pre"

# A real hang under the storm: no event ever completes; one report per communicator.
rm -rf "$LOCKSTEP_TRACE_DIR"
unset LS_STANDIN_FAIL_MOD LS_STANDIN_FAIL_RC
LS_FAKE_CUDA_NEVER=1 LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" timeout 60 \
  "$LS_STRESS" signals 4 300 hang > "$T/hang" 2> "$T/hang.err" || fail "hang run failed: $(cat "$T/hang.err")"
n=$(grep -c 'not complete after' "$T/hang.err")
[ "$n" -eq 4 ] || fail "expected 4 watchdog reports (one per communicator), got $n: $(cat "$T/hang.err")"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump2" || fail "hang trace does not parse"
[ "$(grep -c '^rec .* api=lockstep_watchdog ' "$T/dump2")" -eq 4 ] || fail "expected 4 watchdog records"
echo ok
