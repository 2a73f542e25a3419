#!/bin/sh
# bench/compare_scale.sh — `lockstep compare` at a thousand ranks (bench/RESULTS.md, "compare at
# scale"): synthetic traces (bench/synth/gen_traces) of N ranks x M steps on 3 communicators, rank
# N/3 diverging in count at seq 0.99*M of the world; for each point: generate, time the new compare
# (and OLD, today's, where its memory is safe), check the verdict names that seq, delete.
# usage: bench/compare_scale.sh [BUILD_DIR]   env: OLD=path/to/old/lockstep (optional),
#        OLD_MAX=records above which OLD is not run (default 14000000: ~3 GB for it), WORK=dir (default /tmp)
set -eu
B=${1:-build}
GEN=${GEN:-$B/bench/ls_gen_traces}
NEW="$B/lockstep"
OLD=${OLD:-}
OLD_MAX=${OLD_MAX:-14000000}
WORK=${WORK:-/tmp}/ls_compare_scale.$$
export LOCKSTEP_RULES_DIR="${LOCKSTEP_RULES_DIR:-$(dirname "$0")/../rules}"
trap 'rm -rf "$WORK" "$WORK.new" "$WORK.old" "$WORK.time"' EXIT
measure() { # label binary dir -> "label wall_s peak_kb user_s sys_s | first line"
  /usr/bin/time -f "%e %M %U %S" -o "$WORK.time" "$2" compare "$3" > "$WORK.$1" 2>&1 || true
  first=$(head -1 "$WORK.$1" | cut -c1-90)
  echo "$1 $(cat "$WORK.time" | tail -1) | $first"
}
point() { # ranks steps
  n=$1 m=$2 seq=$(($2 * 99 / 100)) div=$(($1 / 3))
  rm -rf "$WORK"
  "$GEN" -o "$WORK" -n "$n" -m "$m" -c 3 -d "$div:0:$seq:count"
  recs=$(( n * (m + m / 16 + 6) ))
  size=$(du -sm "$WORK" | cut -f1)
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "== $n ranks x $m steps: $recs records, $size MB, divergence at seq $seq (rank $div)"
  line=$(measure new "$NEW" "$WORK")
  echo "$line"
  echo "$line" | grep -q "count-mismatch on comm 0x[0-9a-f]* at seq $seq:" || { echo "new: wrong verdict" >&2; cat "$WORK.new" >&2; exit 1; }
  if [ -n "$OLD" ] && [ "$recs" -le "$OLD_MAX" ]; then
    measure old "$OLD" "$WORK"
    if cmp -s "$WORK.old" "$WORK.new"; then echo "old and new print the same"; else echo "old and new DIFFER"; diff "$WORK.old" "$WORK.new" | head -5; fi
  fi
  rm -rf "$WORK"
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GB; df $(df -h /tmp | awk 'NR==2{print $4}') free"
for m in 12500 25000 50000 100000; do point 1024 "$m"; done
for n in 128 256 512; do point "$n" 25000; done
