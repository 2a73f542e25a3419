#!/bin/sh
# runtime_overhead.sh — host overhead of liblockstep per interposed call, against the
# stand-in libnccl.so.2: unwrapped, preloaded without a CUDA driver (the recorder
# alone), and preloaded with the fake libcuda.so.1 (adds the event-pool bookkeeping;
# the fake's cuEventRecord costs ~nothing, a real one is measured on GPUs).
#   bench/runtime_overhead.sh [BUILD_DIR] [CALLS]     (default build, 1000000)
# LS_BENCH_LIB=PATH times another liblockstep.so (an older build's) with the same program.
set -eu
B=${1:-build}
N=${2:-1000000}
BIN="$B/bench/ls_runtime_overhead"
LIB=${LS_BENCH_LIB:-"$B/runtime/liblockstep.so"}
FAKE="$B/tests/runtime/fakecuda"
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
export LOCKSTEP_TRACE_DIR="$DIR" LOCKSTEP_TRACE_CAPACITY=$((N + 20000))
plain=$("$BIN" "$N")
rec=$(LD_PRELOAD="$LIB" "$BIN" "$N")
dev=$(LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$LIB" "$BIN" "$N" 2000)
med() { echo "$1" | sed -n 's/.*median_ns=\([0-9.]*\).*/\1/p'; }
echo "unwrapped:            $plain"
echo "liblockstep:          $rec"
echo "liblockstep+fakecuda: $dev (bursts of 2000 calls, below the event pool)"
awk -v p="$(med "$plain")" -v r="$(med "$rec")" -v d="$(med "$dev")" 'BEGIN {
  printf "overhead per call (median): %.1f ns recorder only (ratio %.2fx), %.1f ns with event bookkeeping (ratio %.2fx)\n",
         r - p, r / p, d - p, d / p }'
