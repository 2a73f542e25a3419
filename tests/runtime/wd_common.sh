# wd_common.sh — runs the `hang` scenario (seq 0 completes, seq 1 never does) under a
# 1 s watchdog with policy $policy and checks the message (sourced by t_watchdog_*.sh).
. "$(dirname "$0")/lib.sh"
start=$(date +%s)
LOCKSTEP_TIMEOUT=1 LOCKSTEP_POLICY=$policy LS_FAKE_CUDA_COMPLETE_FIRST=1 \
  LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$LS_PROG" hang 6 2> "$T/err"
code=$?
elapsed=$(( $(date +%s) - start ))
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail "dump failed"
comm=$(grep -m1 'api=ncclCommInitRank' "$T/dump" | kv comm)
grep -Eq "^lockstep: rank 0: seq 1 ncclAllReduce on comm $comm not complete after [1-9]\.[0-9] s; last completed seq 0\$" "$T/err" ||
  fail "message missing or wrong: $(cat "$T/err")"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than one line on stderr: $(cat "$T/err")"
grep 'api=ncclAllReduce .* seq=1 ' "$T/dump" | grep -q ' fl=[a-z,]*timedout' ||
  fail "the timed-out call lacks LS_REC_TIMED_OUT"
grep -q 'api=lockstep_watchdog' "$T/dump" || fail "no watchdog event record"
grep -q '^header .* hflags=[a-z,]*watchdog' "$T/dump" || fail "header lacks LS_TRACE_F_WATCHDOG"
