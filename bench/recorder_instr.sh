#!/bin/sh
# recorder_instr.sh — the recorder's own instructions and locked (bus-locking atomic)
# instructions per interposed call, counted by callgrind (deterministic for one binary
# and input, unlike times on a shared machine). The toggles by name also switch
# collection off inside the stand-in's symbols of the same name, so NCCL's own work is
# not counted. Cases: GroupStart / AllReduce / GroupEnd iterations (ls_runtime_overhead group)
# without a driver (LOCKSTEP_DEVICE=0) and with the fake libcuda (GroupEnd records the
# event), and ungrouped AllReduce (ls_runtime_overhead, 10^4 warm-up calls included).
#   bench/recorder_instr.sh [BUILD_DIR] [ITERATIONS] [MAX_GROUP_IR MAX_CALL_IR]
# LS_BENCH_LIB=PATH counts another liblockstep.so with the same programs.
# Prints "<case> Ir=<per call> Ge=<per call>" lines (Ir: instructions, Ge: locked
# read-modify-writes, callgrind's "global bus events"; per iteration for the group case).
# With the bounds it fails when the group iteration without a driver or the ungrouped
# call counts more instructions than that. A script, not a test: the counts are exact for
# one build, but a Debug or another compiler's build counts others (bench/RESULTS.md
# gives the RelWithDebInfo gcc figures; 1.25x them is a bound for that build).
set -eu
B=${1:-build}
N=${2:-10000}
MAXG=${3:-}
MAXC=${4:-}
LIB=${LS_BENCH_LIB:-"$B/runtime/liblockstep.so"}
FAKE="$B/tests/runtime/fakecuda"
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
export LOCKSTEP_TRACE_DIR="$DIR/t" LOCKSTEP_TRACE_CAPACITY=$((3 * N + 40000))
cg() { # name divisor toggles... -- command...
  name=$1 div=$2
  shift 2
  tog=
  while [ "$1" != -- ]; do tog="$tog --toggle-collect=$1"; shift; done
  shift
  # shellcheck disable=SC2086
  valgrind --tool=callgrind --collect-bus=yes $tog --callgrind-out-file="$DIR/$name.out" "$@" \
    > /dev/null 2> "$DIR/$name.err" || { cat "$DIR/$name.err" >&2; exit 1; }
  awk -v name="$name" -v d="$div" '/^events:/ { for (i = 2; i <= NF; i++) ev[i] = $i }
    /^(summary|totals):/ { for (i = 2; i <= NF; i++) v[ev[i]] = $i }
    END { printf "%s Ir=%.1f Ge=%.2f\n", name, v["Ir"] / d, v["Ge"] / d }' "$DIR/$name.out" | tee -a "$DIR/all"
}
G="ncclGroupStart ncclAllReduce ncclGroupEnd"
# shellcheck disable=SC2086
LOCKSTEP_DEVICE=0 LD_PRELOAD="$LIB" cg group_nodev "$N" $G -- "$B/bench/ls_runtime_overhead" group "$N"
# shellcheck disable=SC2086
LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" cg group_fakecuda "$N" $G -- "$B/bench/ls_runtime_overhead" group "$N"
LOCKSTEP_DEVICE=0 LD_PRELOAD="$LIB" cg allreduce_nodev $((N + 10000)) ncclAllReduce -- \
  "$B/bench/ls_runtime_overhead" "$N"
if [ -n "$MAXG" ]; then
  awk -v g="$MAXG" -v c="${MAXC:-$MAXG}" '{ split($2, a, "="); ir[$1] = a[2] }
    END { bad = 0
      if (ir["group_nodev"] > g) { printf "FAIL: %s instructions per group iteration, at most %s\n", ir["group_nodev"], g; bad = 1 }
      if (ir["allreduce_nodev"] > c) { printf "FAIL: %s instructions per call, at most %s\n", ir["allreduce_nodev"], c; bad = 1 }
      exit bad }' "$DIR/all"
fi
