# `lockstep run`: exit codes pass through (128+signal when killed), LD_PRELOAD is
# prepended, LOCKSTEP_* reach children (and grandchildren, as under mpirun), one
# 0600 trace per process in a 0700 directory.
. "$(dirname "$0")/lib.sh"
unset LOCKSTEP_TRACE_DIR
cd "$T" || fail cd
"$LS_BIN" run -- sh -c 'exit 7'
[ $? -eq 7 ] || fail "exit code not passed through"
"$LS_BIN" run -- sh -c 'kill -9 $$'
[ $? -eq 137 ] || fail "signal death not reported as 128+9"
"$LS_BIN" run -- /nonexistent/prog 2> "$T/err"
[ $? -eq 127 ] || fail "missing command should give 127"
grep -q 'nonexistent' "$T/err" || fail "missing command not named"
env=$(LD_PRELOAD="$LS_FAKECUDA/libcuda.so.1" "$LS_BIN" run --trace-dir "$T/d" --timeout 7 --policy exit -- \
  sh -c 'echo "$LD_PRELOAD|$LOCKSTEP_TRACE_DIR|$LOCKSTEP_TIMEOUT|$LOCKSTEP_POLICY"')
[ "$env" = "$LS_LIB:$LS_FAKECUDA/libcuda.so.1|$T/d|7|exit" ] || fail "environment: $env"
# relative dir becomes absolute (children may chdir); default ./lockstep-traces
env=$("$LS_BIN" run -- sh -c 'echo "$LOCKSTEP_TRACE_DIR"')
[ "$env" = "$T/lockstep-traces" ] || fail "default trace dir: $env"
# a launcher-like parent with two children: two traces
"$LS_BIN" run --trace-dir rel -- sh -c "RANK=0 '$LS_PROG' basic & RANK=1 '$LS_PROG' basic; wait" ||
  fail "two-rank run failed"
[ "$(ls rel/*.lstrace | wc -l)" -eq 2 ] || fail "expected two traces in rel/"
[ "$(stat -c %a rel)" = 700 ] || fail "directory mode $(stat -c %a rel)"
for f in rel/*.lstrace; do [ "$(stat -c %a "$f")" = 600 ] || fail "file mode of $f"; done
# a file grows with its records: a short run's is small, not the whole capacity
for f in rel/*.lstrace; do [ "$(stat -c %s "$f")" -lt 2000000 ] || fail "$f: $(stat -c %s "$f") bytes for a few calls"; done
# a command that cannot be found leaves no trace directory
"$LS_BIN" run --trace-dir "$T/never" -- ./no-such-program 2> /dev/null
[ $? -eq 127 ] && [ ! -e "$T/never" ] || fail "a missing command created its trace directory"
# a directory that already holds traces: a note to use one per run
"$LS_BIN" run --trace-dir rel -- true 2> "$T/err2"
grep -q "already holds 2 traces of an earlier run.*use a --trace-dir per run" "$T/err2" || fail "no note: $(cat "$T/err2")"
"$LS_BIN" run --help > /dev/null || fail "--help"
"$LS_BIN" run 2>/dev/null
[ $? -eq 2 ] || fail "no command should be a usage error (2)"
echo ok
