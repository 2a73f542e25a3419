# LOCKSTEP_POLICY on an online mismatch, as the program sees it (prog_online polls
# ncclCommGetAsyncError like a program with error handling): abort aborts the
# communicator right after the report, and the program sees the error (exit 3) long
# before the 20 s watchdog — on one host and across simulated hosts (the logs); exit
# ends the ranks with 86; report leaves the program alone (exit 0) after the report.
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH="$LS_FAKECUDA" LOCKSTEP_TIMEOUT=20
run() { # name policy how secs host-of-rank-0 host-of-rank-1
  for r in 0 1; do
    if [ "$r" = 0 ]; then h=$5; else h=$6; fi
    ( LOCKSTEP_ONLINE_HOST=$h LOCKSTEP_POLICY=$2 RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/$1" \
      LD_PRELOAD="$LS_LIB" "$LS_ONLINE_PROG" "$3" "$4" > "$T/$1.out$r" 2> "$T/$1.err$r"
      echo $? > "$T/$1.rc$r" ) &
  done
  wait
}
check() { # name policy how rc-expected max-s t0
  el=$(($(date +%s) - $6))
  for r in 0 1; do
    [ "$(cat "$T/$1.rc$r")" = "$4" ] ||
      fail "$1: rank $r exit code $(cat "$T/$1.rc$r"), expected $4: $(cat "$T/$1.err$r" "$T/$1.out$r")"
    grep -q "seq 1 nccl[A-Za-z]* on comm [0-9a-f]* differs from rank $((1 - r)) ($3-mismatch)" "$T/$1.err$r" ||
      fail "$1: rank $r: no $3-mismatch report: $(cat "$T/$1.err$r")"
  done
  [ "$el" -le "$5" ] || fail "$1: took $el s (at most $5)"
  echo "$1: exit codes $4 after $el s"
}
t0=$(date +%s); run abort abort op 15 same same; check abort abort op 3 8 "$t0"
grep -q 'communicator error 6' "$T/abort.out0" || fail "abort: the program did not see the error: $(cat "$T/abort.out0")"
t0=$(date +%s); run xabort abort count 15 hostA hostB; check xabort abort count 3 8 "$t0"
t0=$(date +%s); run xexit exit op 15 hostA hostB; check xexit exit op 86 8 "$t0"
t0=$(date +%s); run report report count 2 same same; check report report count 0 10 "$t0"
grep -q 'no error' "$T/report.out1" || fail "report: the program was disturbed: $(cat "$T/report.out1")"
echo ok
