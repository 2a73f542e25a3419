# The side channel with real Open MPI ranks (4, oversubscribed): op mismatch, count
# mismatch (unless Open MPI aborts first) and a skip (a rank finalizes early) are named online, with the right seq,
# ranks and class, and the policy (exit) ends the run long before the 20 s watchdog.
# Args: lockstep op_mismatch count_mismatch early_finalize. Skipped (77) without mpiexec.
. "$(dirname "$0")/lib.sh"
command -v mpiexec > /dev/null || { echo "no mpiexec: skipped"; exit 77; }
LS_BIN=$1
unset LOCKSTEP_TRACE_DIR
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
run() { # name binary limit-s
  t0=$(date +%s%N)
  "$LS_BIN" run --trace-dir "$T/$1" --timeout 20 --policy exit -- timeout -k 3 "$3" \
    mpiexec --allow-run-as-root --oversubscribe -np 4 "$2" > "$T/$1.out" 2>&1
  ms=$((($(date +%s%N) - t0) / 1000000))
  echo "$1: run ended after $ms ms (watchdog: 20000 ms)"
  grep -q 'lockstep: rank [0-9]: .*not complete after [0-9.]* s; last completed' "$T/$1.out" &&
    fail "$1: the watchdog fired: $(cat "$T/$1.out")"
  grep '^lockstep: rank' "$T/$1.out" | head -3
}
run op "$2" 60
[ "$ms" -lt 15000 ] || fail "op: not ended before the watchdog: $(cat "$T/op.out")"
# Rank 1 deviates; which of the pairs (1, q) is named first depends on whose tick came
# before rank 1's policy exit ended the job (rank 0's may never come): any of them, with
# rank 1's MPI_Reduce against the others' MPI_Allreduce, never a pair of two others.
grep -Eq '^lockstep: rank 1: seq 1 MPI_Reduce on comm [0-9a-f]{16} differs from rank [023] \(op-mismatch\): MPI_Reduce\(.*\) at op_mismatch\+0x[0-9a-f]+ here, MPI_Allreduce\(.*\) at op_mismatch\+0x[0-9a-f]+ on rank [023]$|^lockstep: rank [023]: seq 1 MPI_Allreduce on comm [0-9a-f]{16} differs from rank 1 \(op-mismatch\): MPI_Allreduce\(.*\) at op_mismatch\+0x[0-9a-f]+ here, MPI_Reduce\(.*\) at op_mismatch\+0x[0-9a-f]+ on rank 1$' "$T/op.out" ||
  fail "op-mismatch not named: $(cat "$T/op.out")"
grep -Eq '^lockstep: rank [023]: .* differs from rank [023] ' "$T/op.out" &&
  fail "op: two consistent ranks reported as differing: $(cat "$T/op.out")"
# 25 s cap: after its own MPI_ERR_TRUNCATE abort, Open MPI 4.1's mpiexec sometimes never
# exits ("ORTE_ERROR_LOG: Out of resource in show_help.c"; seen without lockstep too).
run count "$3" 25
# Open MPI fails a count mismatch itself (MPI_ERR_TRUNCATE) within milliseconds, often
# before the first watchdog tick: either report is a detection; the stand-in tests
# (runtime.online_policy) assert lockstep's count-mismatch line.
if grep -Eq '^lockstep: rank [0-9]: seq 1 MPI_Allreduce on comm [0-9a-f]{16} differs from rank [0-9] \(count-mismatch\)' "$T/count.out"; then
  echo "count: named online"
  [ "$ms" -lt 15000 ] || fail "count: not ended before the watchdog: $(cat "$T/count.out")"
else
  # Open MPI's MPI_ERR_TRUNCATE banner, or its failure to print it (ORTE_ERROR_LOG: Out of
  # resource in show_help.c, as in t_online_xhost_mpi's abort case); the traces must
  # then name the count mismatch (below) — lockstep's detection, offline.
  grep -Eq 'MPI_ERR_TRUNCATE|ORTE_ERROR_LOG: (Out of resource|Data unpack would read past end of buffer) in file .*show_help\.c' "$T/count.out" ||
    fail "count-mismatch not detected: $(cat "$T/count.out")"
  grep -q 'differs' "$T/count.out" && fail "count-mismatch misnamed: $(cat "$T/count.out")"
  # mpiexec's own teardown may then hang until the cap: that time is Open MPI's, not ours.
  echo "count: Open MPI aborted first (MPI_ERR_TRUNCATE)"
fi
# Either way the traces hold it: the first divergence is the count mismatch at seq 1.
"$LS_BIN" compare --format=json "$T/count" > "$T/count.json" 2> "$T/count.cmp.err"
python3 - "$T/count.json" <<'PY' || fail "count: compare on the traces: $(cat "$T/count.json" "$T/count.cmp.err")"
import json, sys
d = json.load(open(sys.argv[1]))
first = d["divergences"][0]
sys.exit(not (d["status"] == "divergent" and first["class"] == "count-mismatch" and first["seq"] == 1))
PY
# Ranks 0-2 exit (policy) at once; rank 3 sits in MPI_Finalize and mpiexec may wait
# for it: what counts is when the skip was named (the wait time in the line).
run skip "$4" 12
grep -Eq '^lockstep: rank [0-2]: seq 1 MPI_Barrier on comm [0-9a-f]{16}: rank 3 skipped seq 1 \(skip\)' "$T/skip.out" ||
  fail "skip not named: $(cat "$T/skip.out")"
w=$(sed -n 's/.*rank 3 skipped seq 1 (skip): .* not complete after \([0-9.]*\) s;.*/\1/p' "$T/skip.out" | head -1)
echo "skip: named after the ranks waited $w s"
awk -v w="$w" 'BEGIN { exit !(w + 0 < 5) }' || fail "skip named only after $w s"
echo ok
