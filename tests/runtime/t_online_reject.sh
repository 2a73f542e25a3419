# Foreign and corrupted side-channel messages are rejected, reported once, and never
# trusted: ranks with different job secrets are different jobs (other file names);
# another job's file and a garbage file under the channel's name are rejected. The traces are written and compare still works.
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH="$LS_FAKECUDA" LOCKSTEP_ONLINE_DIR="$T/ch"
mkdir -m 700 "$T/ch"
# different secrets are different jobs: other file names, nothing compared, nothing said
for r in 0 1; do
  LOCKSTEP_JOB_SECRET=$(printf '%032x' $((r + 1))) LS_TEST_LINGER_MS=800 RANK=$r WORLD_SIZE=2 \
    LOCKSTEP_TRACE_DIR="$T/f" LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge op 2> "$T/f.err$r" &
done
wait
cat "$T"/f.err* | grep -q 'differs' && fail "another job's message was trusted: $(cat "$T"/f.err*)"
"$LS_BIN" compare "$T/f" > /dev/null 2>&1; [ $? -eq 1 ] || fail "compare lost the divergence"
# another job's file under this job's name: learn both names from runs (the file of
# the second kept while it runs), then plant the other job's file: its header's MAC is
# another key's, so it is rejected
learn() { # secret -> prints the channel file's name, a copy kept in $T/kept
  rm -f "$T/ch"/* # (a rank whose peer never came leaves its files, as after a kill)
  for r in 0 1; do
    LOCKSTEP_JOB_SECRET=$1 LS_TEST_LINGER_MS=1500 RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/k" \
      LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge none 2> /dev/null &
  done
  n=
  for i in $(seq 40); do
    n=$(ls "$T/ch" | grep '\.fp$' | head -1)
    [ -n "$n" ] && break
    sleep 0.05
  done
  [ -n "$n" ] && sleep 0.3 && cp "$T/ch/$n" "$T/kept"
  wait
  rm -rf "$T/k"
  echo "$n"
}
mine=$(learn "$(printf '%032x' 1)")
theirs=$(learn "$(printf '%032x' 2)")
[ -n "$mine" ] && [ -n "$theirs" ] && [ "$mine" != "$theirs" ] || fail "file names: '$mine' '$theirs'"
rm -f "$T/ch"/*
cp "$T/kept" "$T/ch/$mine"; chmod 600 "$T/ch/$mine"
for r in 0 1; do
  LOCKSTEP_JOB_SECRET=$(printf '%032x' 1) LS_TEST_LINGER_MS=800 RANK=$r WORLD_SIZE=2 \
    LOCKSTEP_TRACE_DIR="$T/k" LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge op 2> "$T/k.err$r" &
done
wait
for r in 0 1; do
  grep -q "^lockstep: rank $r: side channel .*$mine: rejected its header (foreign or corrupted); online check off" "$T/k.err$r" ||
    fail "rank $r: another job's file not rejected: $(cat "$T/k.err$r")"
done
cat "$T"/k.err* | grep -q 'differs' && fail "a foreign message was trusted: $(cat "$T"/k.err*)"
# a corrupted file: learn the channel file's name from a run, then plant garbage there
rm -f "$T/ch"/*
for r in 0 1; do
  LS_TEST_LINGER_MS=2500 RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/c" LD_PRELOAD="$LS_LIB" \
    "$LS_PROG" diverge none 2> /dev/null &
done
name=
for i in $(seq 40); do
  name=$(ls "$T/ch" | grep '\.fp$' | head -1)
  [ -n "$name" ] && break
  sleep 0.05
done
wait
[ -n "$name" ] || fail "no channel file seen"
head -c 300000 /dev/urandom > "$T/ch/$name"
chmod 600 "$T/ch/$name"
rm -f "$T/c"/*.lstrace # same trace dir (it keys the name), fresh traces
for r in 0 1; do
  LS_TEST_LINGER_MS=800 RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/c" LD_PRELOAD="$LS_LIB" \
    "$LS_PROG" diverge op 2> "$T/c.err$r" &
done
wait
for r in 0 1; do
  grep -q "^lockstep: rank $r: side channel .*$name: rejected its header (foreign or corrupted); online check off" "$T/c.err$r" ||
    fail "rank $r: garbage not rejected: $(cat "$T/c.err$r")"
  [ "$(wc -l < "$T/c.err$r")" -eq 1 ] || fail "rank $r said more: $(cat "$T/c.err$r")"
done
"$LS_BIN" compare "$T/c" > /dev/null 2>&1; [ $? -eq 1 ] || fail "compare lost the divergence"
# a directory open to others is not used
chmod 755 "$T/ch"; rm -f "$T/ch"/*
for r in 0 1; do
  LS_TEST_LINGER_MS=300 RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/o" LD_PRELOAD="$LS_LIB" \
    "$LS_PROG" diverge op 2> "$T/o.err$r" &
done
wait
grep -q 'online check off: side-channel directory .* is not a directory of this user closed to others' "$T/o.err0" ||
  fail "open directory used: $(cat "$T/o.err0")"
echo ok
