# The cross-host logs under attack or failure, with ranks on simulated hosts
# (LOCKSTEP_ONLINE_HOST): a rank with another secret is another job (other file names,
# nothing compared); another job's log, a garbage log and a log open to others under
# the name a rank reads are rejected, said once, never trusted; a log that cannot be written turns
# the cross-host half off with one notice, the program's result unchanged and
# `lockstep compare` still naming the divergence from the traces; so does a channel
# directory that cannot be created at all.
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH="$LS_FAKECUDA" LOCKSTEP_ONLINE_DIR="$T/ch"
mkdir -m 700 "$T/ch"
one() { # name rank host linger [how]: one rank, in the background, exit code to name.rcR
  # (traces in $T/$TRD when set: the trace directory is part of the channel's names)
  ( LOCKSTEP_ONLINE_HOST=$3 LS_TEST_LINGER_MS=$4 RANK=$2 WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/${TRD:-$1}" \
    LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge "${5:-op}" 2> "$T/$1.err$2"; echo $? > "$T/$1.rc$2" ) &
}
# another secret on host B is another job: its log has another name, nothing is compared
LOCKSTEP_JOB_SECRET=$(printf '%032x' 1) one sec 0 hostA 1200
LOCKSTEP_JOB_SECRET=$(printf '%032x' 2) one sec 1 hostB 1200
wait
cat "$T"/sec.err* | grep -q differs && fail "another job's messages were trusted: $(cat "$T"/sec.err*)"
# learn the names: rank 0 alone (rank 1 never comes) with secret 1, then rank 1 alone
# with secret 2, whose log is kept while it runs
learn() { # rank host secret -> prints its log's file name
  LOCKSTEP_JOB_SECRET=$3 TRD=solo one learn$1 "$1" "$2" 1500 none
  n=
  for i in $(seq 40); do
    n=$(ls "$T/ch" | grep "r$1\.log\$" | head -1)
    [ -n "$n" ] && break
    sleep 0.05
  done
  [ -n "$n" ] && sleep 0.2 && cp "$T/ch/$n" "$T/kept$1"
  wait
  echo "$n"
}
name=$(learn 0 hostA "$(printf '%032x' 1)")
[ -n "$name" ] || fail "rank 0 wrote no log"
other=$(learn 1 hostB "$(printf '%032x' 2)")
[ -n "$other" ] && [ -s "$T/kept1" ] || fail "rank 1 wrote no log"
[ "${name%-r0.log}" != "${other%-r1.log}" ] || fail "the secret is not in the log's name"
peer="$T/ch/${name%r0.log}r1.log"
# rank 1's log from the other job, under the name rank 0 reads: a well-formed log whose
# MACs are another key's
rm -rf "$T/solo"
cp "$T/kept1" "$peer"; chmod 600 "$peer"
LOCKSTEP_JOB_SECRET=$(printf '%032x' 1) TRD=solo one foreign 0 hostA 2500 none; wait
grep -q "^lockstep: rank 0: side channel $peer: rejected a log record from rank 1 (foreign or corrupted); rank 1 is no longer checked online" "$T/foreign.err0" ||
  fail "foreign log not rejected: $(cat "$T/foreign.err0")"
[ "$(wc -l < "$T/foreign.err0")" -eq 1 ] || fail "foreign: said more than once: $(cat "$T/foreign.err0")"
export LOCKSTEP_JOB_SECRET=$(printf '%032x' 1)
# a garbage log for rank 1
rm -rf "$T/solo"
head -c 4096 /dev/urandom > "$peer"; chmod 600 "$peer"
TRD=solo one garbage 0 hostA 2500 none; wait
grep -q "^lockstep: rank 0: side channel $peer: rejected a log record from rank 1 (foreign or corrupted); rank 1 is no longer checked online" "$T/garbage.err0" ||
  fail "garbage log not rejected: $(cat "$T/garbage.err0")"
[ "$(wc -l < "$T/garbage.err0")" -eq 1 ] || fail "garbage: said more than once: $(cat "$T/garbage.err0")"
[ "$(cat "$T/garbage.rc0")" = 0 ] || fail "garbage: the program failed"
# a log that others may write
chmod 644 "$peer"
rm -rf "$T/solo"
TRD=solo one open 0 hostA 600 none; wait
grep -q "rejected a log not private to this user from rank 1" "$T/open.err0" ||
  fail "open log not rejected: $(cat "$T/open.err0")"
rm -f "$peer"
# rank 0's log cannot be written (a directory squats on its name): one notice, rank 0
# still reads rank 1's log, the programs' results and the traces are as without lockstep
mkdir "$T/ch/$name"
rm -rf "$T/solo"
TRD=solo one nolog 0 hostA 1200; TRD=solo one nolog 1 hostB 1200; wait
grep -q "^lockstep: online check across hosts off: cannot append to $T/ch/$name: .*; ranks on other hosts compare through the traces" "$T/nolog.err0" ||
  fail "no notice for the unwritable log: $(cat "$T/nolog.err0")"
[ "$(grep -c 'online check' "$T/nolog.err0")" -eq 1 ] || fail "notice repeated: $(cat "$T/nolog.err0")"
for r in 0 1; do
  [ "$(cat "$T/nolog.rc$r")" = 0 ] || fail "nolog: rank $r exit code $(cat "$T/nolog.rc$r")"
done
"$LS_BIN" compare "$T/solo" > "$T/nolog.cmp" 2>&1; [ $? -eq 1 ] || fail "compare: $(cat "$T/nolog.cmp")"
grep -q 'op-mismatch' "$T/nolog.cmp" || fail "compare lost the op-mismatch: $(cat "$T/nolog.cmp")"
rmdir "$T/ch/$name"
# no directory at all (under a regular file): one notice per process, results unchanged
: > "$T/file"
LOCKSTEP_ONLINE_DIR="$T/file/ch" one nodir 0 hostA 300
LOCKSTEP_ONLINE_DIR="$T/file/ch" one nodir 1 hostB 300
wait
for r in 0 1; do
  [ "$(cat "$T/nodir.rc$r")" = 0 ] || fail "nodir: rank $r exit code $(cat "$T/nodir.rc$r")"
  [ "$(wc -l < "$T/nodir.err$r")" -eq 1 ] && grep -q "^lockstep: online check off: cannot create the side-channel directory $T/file/ch" "$T/nodir.err$r" ||
    fail "nodir: rank $r: $(cat "$T/nodir.err$r")"
done
"$LS_BIN" compare "$T/nodir" > /dev/null 2>&1; [ $? -eq 1 ] || fail "nodir: compare lost the divergence"
echo ok
