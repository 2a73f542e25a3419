# Darshan's first test: `true` and `ls` with the library preloaded print nothing
# extra, exit 0, and leave no trace (nothing calls NCCL, so nothing is initialized).
. "$(dirname "$0")/lib.sh"
cd "$T" || fail "cd"
unset LOCKSTEP_TRACE_DIR
out=$(LD_PRELOAD="$LS_LIB" true 2>&1) || fail "true exited $?"
[ -z "$out" ] || fail "true printed: $out"
mkdir -p sub && touch sub/a sub/b
plain=$(ls -la sub 2>&1) || fail "ls failed"
pre=$(LD_PRELOAD="$LS_LIB" ls -la sub 2>&1) || fail "ls preloaded exited $?"
[ "$plain" = "$pre" ] || fail "ls output differs when preloaded: $pre"
err=$(LD_PRELOAD="$LS_LIB" ls sub 2>&1 >/dev/null)
[ -z "$err" ] || fail "ls preloaded wrote to stderr: $err"
[ ! -e lockstep-traces ] || fail "a trace directory was created for a process without NCCL"
echo ok
