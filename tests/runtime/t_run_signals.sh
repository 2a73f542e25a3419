# SIGINT and SIGTERM sent to `lockstep run` reach the command's whole process group,
# and nothing of the job is left running after it: here a non-interactive shell's
# background children, which ignore SIGINT, stand in for a launcher's ranks.
. "$(dirname "$0")/lib.sh"
cd "$T" || fail cd
for sig in INT:2 TERM:15; do
  num=${sig#*:} sig=${sig%:*}
  rm -f p0 p1 p2
  "$LS_BIN" run --trace-dir "$T/d" -- sh -c 'sleep 60 & echo $! > p1; sleep 60 & echo $! > p2; echo $$ > p0; wait' &
  run=$!
  for i in $(seq 100); do [ -s p0 ] && [ -s p1 ] && [ -s p2 ] && break; sleep 0.1; done
  [ -s p2 ] || fail "$sig: the command did not start"
  t0=$(date +%s)
  kill -$sig $run
  wait $run
  rc=$?
  want=$((128 + num))
  [ $rc -eq $want ] || fail "$sig: lockstep run exited $rc, want $want (the shell killed by SIG$sig)"
  for p in p0 p1 p2; do
    ! kill -0 "$(cat $p)" 2>/dev/null || { kill -9 "$(cat $p)"; fail "$sig: process $(cat $p) ($p) left running"; }
  done
  [ $(($(date +%s) - t0)) -lt 10 ] || fail "$sig: took $(($(date +%s) - t0)) s"
done
echo ok
