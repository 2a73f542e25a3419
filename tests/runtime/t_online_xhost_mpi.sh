# The side channel across simulated hosts with real Open MPI ranks (4, oversubscribed):
# rank 1 alone on "host B" (LOCKSTEP_ONLINE_HOST), ranks 0, 2, 3 on "host A", so every
# comparison with rank 1 goes through the logs in the shared directory. Its op
# mismatch is named online (policy exit ends the run long before the 20 s watchdog);
# with policy abort the communicator is aborted (Open MPI's MPI_Abort with lockstep's
# code 86 ends the job) just as early.
# Args: lockstep op_mismatch. Skipped (77) without mpiexec.
. "$(dirname "$0")/lib.sh"
command -v mpiexec > /dev/null || { echo "no mpiexec: skipped"; exit 77; }
LS_BIN=$1
unset LOCKSTEP_TRACE_DIR
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -m 700 "$T/ch"
export LOCKSTEP_ONLINE_DIR="$T/ch"
run() { # name policy
  t0=$(date +%s%N)
  "$LS_BIN" run --trace-dir "$T/$1" --timeout 20 --policy "$2" -- timeout -k 3 60 \
    mpiexec --allow-run-as-root --oversubscribe -np 4 sh -c \
    'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then h=B; else h=A; fi; LOCKSTEP_ONLINE_HOST=host$h exec "$0"' \
    "$3" > "$T/$1.out" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  echo "$1: run ended after $ms ms (watchdog: 20000 ms)"
  grep -q 'not complete after [0-9.]* s; last completed' "$T/$1.out" &&
    fail "$1: the watchdog fired: $(cat "$T/$1.out")"
  grep '^lockstep: rank' "$T/$1.out" | head -3
  [ "$ms" -lt 15000 ] || fail "$1: not ended before the watchdog: $(cat "$T/$1.out")"
  # a line that can only have come through the logs: rank 1 against a rank of host A
  grep -Eq '^lockstep: rank ([023]: seq 1 MPI_Allreduce on comm [0-9a-f]{16} differs from rank 1|1: seq 1 MPI_Reduce on comm [0-9a-f]{16} differs from rank [023]) \(op-mismatch\): MPI_(Reduce|Allreduce)\(.*\) at op_mismatch\+0x[0-9a-f]+ here' "$T/$1.out" ||
    fail "$1: op-mismatch across hosts not named: $(cat "$T/$1.out")"
}
run exit exit "$2"
run abort abort "$2"
# Open MPI 4.1 sometimes fails to print its MPI_ABORT banner ("ORTE_ERROR_LOG: Out of
# resource" or "Data unpack would read past end of buffer" in show_help.c, seen without
# lockstep too): then its failure to print it is the trace of the abort; the exit code is
# the abort's either way
[ "$rc" -ne 0 ] || fail "abort: the run exited 0"
{ grep -q 'MPI_ABORT was invoked on rank [0-9] in communicator MPI_COMM_WORLD' "$T/abort.out" &&
  grep -q 'errorcode 86' "$T/abort.out"; } ||
  grep -Eq 'ORTE_ERROR_LOG: (Out of resource|Data unpack would read past end of buffer) in file .*show_help\.c' "$T/abort.out" ||
  fail "abort: no MPI_Abort with code 86: $(cat "$T/abort.out")"
echo ok
