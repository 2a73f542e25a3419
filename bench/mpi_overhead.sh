#!/bin/sh
# mpi_overhead.sh — what liblockstep's PMPI layer adds per MPI_Allreduce across 4 ranks.
# Each run alternates batches through MPI_Allreduce and PMPI_Allreduce (see
# mpi_overhead.c), so "with / without lockstep" is a ratio measured in one run: under
# `lockstep run` MPI_ goes through the recorder and PMPI_ does not; plain, both are MPI's
# (a ratio near 1 there bounds the method's noise). ROUNDS runs of each, interleaved;
# prints every run and the median over runs.   bench/mpi_overhead.sh [BUILD] [ROUNDS] [SCALE]
set -eu
B=${1:-build}
ROUNDS=${2:-5}
SCALE=${3:-10}
BIN="$B/bench/mpi_overhead"
LS="$B/lockstep"
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
MPIRUN="mpirun --allow-run-as-root --oversubscribe -np 4"
for r in $(seq 1 "$ROUNDS"); do
  $MPIRUN "$BIN" "$SCALE" | sed 's/^/plain /' >> "$DIR/all"
  "$LS" run --trace-dir "$DIR/tr$r" --capacity 8000000 -- $MPIRUN "$BIN" "$SCALE" |
    sed 's/^/lockstep /' >> "$DIR/all"
done
cat "$DIR/all"
[ "$(ls "$DIR"/tr1/*.lstrace | wc -l)" -eq 4 ] || { echo "error: lockstep wrote no traces" >&2; exit 1; }
"$LS" compare "$DIR/tr1" > /dev/null || { echo "error: the recorded runs are not consistent" >&2; exit 1; }
awk '
function val(s, k,   i, kv) { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } }
{ c = val($0, "case"); key = $1 " " c; n[key]++
  w[key, n[key]] = val($0, "mpi_ns"); p[key, n[key]] = val($0, "pmpi_ns"); r[key, n[key]] = val($0, "ratio")
  d[key, n[key]] = val($0, "mpi_ns") - val($0, "pmpi_ns")
  cases[c] = 1 }
function med(arr, key,   i, j, t, m, a) {
  m = n[key]; for (i = 1; i <= m; i++) a[i] = arr[key, i] + 0
  for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return a[int((m + 1) / 2)]
}
END {
  printf "\nmedian over runs (per call; ratio = MPI_Allreduce / PMPI_Allreduce in the same run)\n"
  printf "%-11s %14s %14s %9s %14s %14s %9s %12s\n", "case", "plain MPI_", "plain PMPI_", "ratio",
         "lockstep MPI_", "lockstep PMPI_", "ratio", "MPI_-PMPI_"
  for (c in cases) {
    pl = "plain " c; ls = "lockstep " c
    printf "%-11s %11.1f ns %11.1f ns %8.3fx %11.1f ns %11.1f ns %8.3fx %9.1f ns\n", c,
           med(w, pl), med(p, pl), med(r, pl), med(w, ls), med(p, ls), med(r, ls), med(d, ls)
  }
}' "$DIR/all"
