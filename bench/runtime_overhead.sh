#!/bin/sh
# runtime_overhead.sh — host overhead of liblockstep per interposed call, against the
# stand-in libnccl.so.2: unwrapped, preloaded without a CUDA driver (the recorder
# alone), and preloaded with the fake libcuda.so.1 (adds the device bookkeeping; the
# fake's calls cost ~nothing, the real driver's are measured on GPUs), once with an
# event per call and once with LOCKSTEP_DEFER_US=1000. The fake counts the driver
# calls it gets: they are printed per interposed call.
#   bench/runtime_overhead.sh [BUILD_DIR] [CALLS] [MAX_DRIVER_CALLS_PER_CALL]
# With the third argument the script fails when a run with the fake driver made more
# driver calls per interposed call than that, or the deferred run recorded more than
# one event per 100 calls (the per-call driver calls must not come back).
# LS_BENCH_LIB=PATH times another liblockstep.so (an older build's) with the same program.
set -eu
B=${1:-build}
N=${2:-1000000}
MAX=${3:-}
BIN="$B/bench/ls_runtime_overhead"
LIB=${LS_BENCH_LIB:-"$B/runtime/liblockstep.so"}
FAKE="$B/tests/runtime/fakecuda"
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
export LOCKSTEP_TRACE_DIR="$DIR" LOCKSTEP_TRACE_CAPACITY=$((N + 20000))
plain=$("$BIN" "$N")
rec=$(LD_PRELOAD="$LIB" "$BIN" "$N")
dev=$(LS_FAKE_CUDA_COUNT="$DIR/count.dev" LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" "$BIN" "$N" 1000)
def=$(LOCKSTEP_DEFER_US=1000 LS_FAKE_CUDA_COUNT="$DIR/count.def" LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" "$BIN" "$N")
med() { echo "$1" | sed -n 's/.*median_ns=\([0-9.]*\).*/\1/p'; }
calls() { echo "$1" | sed -n 's/.*calls=\([0-9]*\).*/\1/p'; }
# driver calls per interposed call: all, and cuEventRecord alone (10^4 warm-up calls count too)
per() { awk -v n="$(( $(calls "$2") + 10000 ))" -v only="${3:-}" \
  '(only == "" || $1 == only) { s += $2 } END { printf "%.3f", s / n }' "$1"; }
echo "unwrapped:            $plain"
echo "liblockstep:          $rec"
echo "liblockstep+fakecuda: $dev (bursts of 1000 calls; driver calls per call $(per "$DIR/count.dev" "$dev"), records $(per "$DIR/count.dev" "$dev" cuEventRecord))"
echo "  + LOCKSTEP_DEFER_US=1000: $def (driver calls per call $(per "$DIR/count.def" "$def"), records $(per "$DIR/count.def" "$def" cuEventRecord))"
sed 's/^/    fake driver, event per call: /' "$DIR/count.dev"
sed 's/^/    fake driver, deferred: /' "$DIR/count.def"
awk -v p="$(med "$plain")" -v r="$(med "$rec")" -v d="$(med "$dev")" -v f="$(med "$def")" 'BEGIN {
  printf "overhead per call (median): %.1f ns recorder only (ratio %.2fx), %.1f ns with an event per call (ratio %.2fx), %.1f ns deferred (ratio %.2fx)\n",
         r - p, r / p, d - p, d / p, f - p, f / p }'
if [ -n "$MAX" ]; then
  awk -v a="$(per "$DIR/count.dev" "$dev")" -v b="$(per "$DIR/count.def" "$def")" \
      -v rd="$(per "$DIR/count.def" "$def" cuEventRecord)" -v m="$MAX" 'BEGIN {
    if (a > m || b > m) { printf "FAIL: %s and %s driver calls per interposed call, at most %s allowed\n", a, b, m; exit 1 }
    if (rd > 0.01) { printf "FAIL: deferred run recorded %s events per call (at most 0.01)\n", rd; exit 1 } }'
fi
