#!/usr/bin/env bash
# hostcost_probe.sh — what makes NCCL's own symbol slower in a process that has
# liblockstep loaded. Runs bench/gpu_allreduce_bench (8 B, 10000 iterations per symbol)
# one process per variant, the variants in a rotating order per round, all on CPUS:
#   plain      no lockstep
#   run        under `lockstep run` (what suite.py's bench step measures)
#   preload    LD_PRELOAD=liblockstep.so, no launcher
#   disabled   preloaded with LOCKSTEP_DISABLE=1: every wrapper passes straight through
#   noonline   preloaded, LOCKSTEP_ONLINE=0 (no side channel)
#   pollslow   preloaded, LOCKSTEP_POLL_MS=60000 (the watchdog thread asleep)
#   defer      preloaded, LOCKSTEP_DEFER_US=1000
#   directonly preloaded, GT_BENCH_DIRECT_ONLY=1: no interposed collective in the process
#   directsmall  directonly with LOCKSTEP_TRACE_CAPACITY=64 (a 12 KiB trace instead of 192 MiB)
#   preloadsmall preload with LOCKSTEP_TRACE_CAPACITY=64 (records past 64 dropped: no bookkeeping)
# After each preloaded run, the trace's record count and the LOCKSTEP_DEVICE_STATS line go to
# OUT.csv.records. GT_PROBE_TIMING=1 then runs completion_timing (100 cycles, poll 1 ms)
# under lockstep run with and without LOCKSTEP_DEFER_US, 3 times each, with the stats line.
# GT_PROBE_LIB=PATH: another liblockstep.so for the preloaded variants.
# Usage (after run_all.sh built everything into WORK):
#   gpu_tests/hostcost_probe.sh WORK OUT.csv [ROUNDS=4] [CPUS=2-5]
# Prints per variant the median over rounds of the per-process medians and p95s.
set -uo pipefail
W=$1 CSV=$2 ROUNDS=${3:-4} CPUS=${4:-2-5}
B=$W/bin/gpu_allreduce_bench
LIB=${GT_PROBE_LIB:-$(ls "$W"/build/runtime/liblockstep.so "$W"/build/*/liblockstep.so 2>/dev/null | head -1)}
LS=$W/build/lockstep
T=$W/probe-traces
[ -x "$B" ] && [ -f "$LIB" ] && [ -x "$LS" ] || { echo "hostcost_probe: missing $B, $LIB or $LS" >&2; exit 2; }
rm -f "$CSV" "$CSV.records"
variants=(${GT_PROBE_VARIANTS:-plain run preload disabled noonline pollslow defer directonly})
one() { # variant round
  local v=$1 r=$2 m=(taskset -c "$CPUS" mpirun -np 1 --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0)
  local p=("$B" "$CSV" "$v-r$r" 10000 20 16)
  rm -rf "$T"
  case $v in
    plain) timeout 60 "${m[@]}" "${p[@]}" ;;
    run) timeout 60 "$LS" run --trace-dir "$T" --timeout 60 -- "${m[@]}" "${p[@]}" ;;
    preload) LOCKSTEP_TRACE_DIR=$T LD_PRELOAD=$LIB timeout 60 "${m[@]}" -x LD_PRELOAD -x LOCKSTEP_TRACE_DIR "${p[@]}" ;;
    disabled) LOCKSTEP_DISABLE=1 LD_PRELOAD=$LIB timeout 60 "${m[@]}" -x LD_PRELOAD -x LOCKSTEP_DISABLE "${p[@]}" ;;
    noonline) LOCKSTEP_ONLINE=0 LOCKSTEP_TRACE_DIR=$T LD_PRELOAD=$LIB timeout 60 "${m[@]}" -x LD_PRELOAD -x LOCKSTEP_ONLINE -x LOCKSTEP_TRACE_DIR "${p[@]}" ;;
    pollslow) LOCKSTEP_POLL_MS=60000 LOCKSTEP_TRACE_DIR=$T LD_PRELOAD=$LIB timeout 60 "${m[@]}" -x LD_PRELOAD -x LOCKSTEP_POLL_MS -x LOCKSTEP_TRACE_DIR "${p[@]}" ;;
    directonly) GT_BENCH_DIRECT_ONLY=1 LOCKSTEP_TRACE_DIR=$T LD_PRELOAD=$LIB timeout 60 "${m[@]}" -x LD_PRELOAD -x GT_BENCH_DIRECT_ONLY -x LOCKSTEP_TRACE_DIR "${p[@]}" ;;
    directsmall) LOCKSTEP_TRACE_CAPACITY=64 GT_BENCH_DIRECT_ONLY=1 LOCKSTEP_TRACE_DIR=$T LD_PRELOAD=$LIB timeout 60 "${m[@]}" -x LD_PRELOAD -x GT_BENCH_DIRECT_ONLY -x LOCKSTEP_TRACE_DIR -x LOCKSTEP_TRACE_CAPACITY "${p[@]}" ;;
    preloadsmall) LOCKSTEP_TRACE_CAPACITY=64 LOCKSTEP_TRACE_DIR=$T LD_PRELOAD=$LIB timeout 60 "${m[@]}" -x LD_PRELOAD -x LOCKSTEP_TRACE_DIR -x LOCKSTEP_TRACE_CAPACITY "${p[@]}" ;;
    defer) LOCKSTEP_DEFER_US=1000 LOCKSTEP_TRACE_DIR=$T LD_PRELOAD=$LIB timeout 60 "${m[@]}" -x LD_PRELOAD -x LOCKSTEP_DEFER_US -x LOCKSTEP_TRACE_DIR "${p[@]}" ;;
  esac > /dev/null 2> "$W/probe.err" || echo "hostcost_probe: $v round $r failed" >&2
  for f in "$T"/*.lstrace; do # nrecords: the u64 at offset 32 of the header
    [ -f "$f" ] && echo "$v-r$r $(od -An -t u8 -j 32 -N 8 "$f" | tr -d ' ') $(grep -m1 'lockstep: device' "$W/probe.err")" >> "$CSV.records"
  done
}
export LOCKSTEP_DEVICE_STATS=1
n=${#variants[@]}
for ((r = 0; r < ROUNDS; r++)); do
  for ((k = 0; k < n; k++)); do one "${variants[(k + r) % n]}" "$r"; done
done
python3 - "$CSV" <<'PY'
import csv, statistics, sys
rows = [x for x in csv.DictReader(open(sys.argv[1])) if x["bytes"] == "8"]
lab = lambda x: x["label"].rsplit("-r", 1)[0]
plain = statistics.median(float(x["median_us"]) for x in rows if lab(x) == "plain" and x["variant"] == "wrapped")
print("variant    symbol   median_us  p95_us  /plain  (per-process medians)")
for v in ("plain", "run", "preload", "disabled", "noonline", "pollslow", "defer", "directonly",
          "directsmall", "preloadsmall"):
    for s in ("wrapped", "direct"):
        m = [float(x["median_us"]) for x in rows if lab(x) == v and x["variant"] == s]
        p = [float(x["p95_us"]) for x in rows if lab(x) == v and x["variant"] == s]
        if m:
            print(f"{v:10s} {s:8s} {statistics.median(m):9.3f} {statistics.median(p):7.3f} {statistics.median(m) / plain:7.3f}  "
                  + " ".join(f"{y:.3f}" for y in m))
PY
[ -f "$CSV.records" ] && { echo "records per trace:"; cat "$CSV.records"; }
if [ "${GT_PROBE_TIMING:-}" = 1 ]; then
  for r in 0 1 2; do
    for d in 0 1000; do
      rm -rf "$T" "$W/ct.csv"
      LOCKSTEP_DEFER_US=$d LOCKSTEP_POLL_MS=1 timeout 60 "$LS" run --trace-dir "$T" --timeout 30 -- \
        taskset -c "$CPUS" mpirun -np 1 --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0 \
        "$W/bin/completion_timing" "$W/ct.csv" 100 3 256 > /dev/null 2> "$W/probe.err"
      python3 -c "import csv,statistics,sys; v=[float(x['host_us']) for x in csv.DictReader(open(sys.argv[1])) if x['warmup']=='0']; print('timing defer_us=$d r$r host median %.3f p95 %.3f us' % (statistics.median(v), sorted(v)[94]))" "$W/ct.csv"
      grep -m1 'lockstep: device' "$W/probe.err"
    done
  done
fi
