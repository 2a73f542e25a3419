# Stress item 5: ncclCommAbort from another thread, without the communicator's lock
# (as PyTorch's watchdog does), while eight threads issue calls on it; the stand-in,
# like NCCL, fails calls on an aborted communicator. No deadlock; each thread saw
# exactly what the stand-in returned (successes, then errors only); the abort and
# every call are in the trace in issue order. Then the watchdog's own abort
# (LOCKSTEP_POLICY=abort) while another thread keeps creating communicators.
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || { echo "no python3: skipped"; exit 77; }
export LS_STANDIN_DELAY_US=50 LS_STANDIN_ABORT_ERRORS=1
timeout 60 "$LS_STRESS" abort 8 400 > "$T/plain" || fail "plain run failed ($?)"
LS_STRESS_LOG="$T/log" LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" timeout 60 \
  "$LS_STRESS" abort 8 400 > "$T/pre" 2> "$T/pre.err" || fail "preloaded run failed: $(cat "$T/pre.err")"
[ -s "$T/pre.err" ] && fail "unexpected stderr: $(head -5 "$T/pre.err")"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail "trace does not parse"
python3 "$LS_STRESS_CHECK" "$T/dump" "$T/log" --aborted || fail "trace does not match the calls"
cat "$T/pre"

unset LS_STANDIN_DELAY_US LS_STANDIN_ABORT_ERRORS
LOCKSTEP_TRACE_DIR="$T/wd" LOCKSTEP_POLICY=abort LOCKSTEP_TIMEOUT=0.3 LS_FAKE_CUDA_NEVER=1 \
  LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" timeout 60 "$LS_STRESS" wdabort 2> "$T/wd.err"
st=$?
[ $st -eq 3 ] || fail "the watchdog should have aborted the hung communicator (exit 3), got $st: $(cat "$T/wd.err")"
[ "$(grep -c 'not complete after' "$T/wd.err")" -eq 1 ] || fail "expected one report: $(cat "$T/wd.err")"
f=$(one_trace "$T/wd")
"$LS_DUMP" "$f" > "$T/wd.dump" || fail "watchdog-abort trace does not parse"
grep -q '^rec .* api=lockstep_watchdog .* aux1=1$' "$T/wd.dump" || fail "no watchdog record with policy abort"
echo ok
