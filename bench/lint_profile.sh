#!/usr/bin/env bash
# lint_profile.sh — where does `lockstep lint` spend its time on one TU? Samples one
# run with perf (software clock: this VM has no hardware counters) and prints the
# top symbols by self time, then lockstep's own functions by inclusive time.
# Usage: bench/lint_profile.sh FILE [clang flags...]   (default flags: -I/usr/local/cuda/include)
# Env: LOCKSTEP (default build/lockstep), FREQ (samples/s, default 4000), TOP (default 25).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
LOCKSTEP=${LOCKSTEP:-$root/build/lockstep}
FREQ=${FREQ:-4000}
TOP=${TOP:-25}
[ $# -ge 1 ] || { echo "usage: $0 FILE [flags...]" >&2; exit 2; }
file=$1; shift
flags=("$@"); [ ${#flags[@]} -gt 0 ] || flags=(-I/usr/local/cuda/include)
command -v perf >/dev/null || { echo "lint_profile.sh: perf not found" >&2; exit 2; }
data=$(mktemp /tmp/lint_profile.XXXXXX)
trap 'rm -f "$data" "$data.old"' EXIT
perf record -q -o "$data" -F "$FREQ" -g "$LOCKSTEP" lint "$file" -- "${flags[@]}" >/dev/null 2>&1 || true
echo "== self time by DSO =="
perf report -i "$data" --no-children --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' | head -8
echo "== top $TOP symbols, self time =="
perf report -i "$data" --no-children --sort dso,sym --stdio -g none 2>/dev/null |
  grep -E '^ +[0-9.]+%' | head -"$TOP"
echo "== lockstep's own functions, inclusive time (children) =="
perf report -i "$data" --children --sort sym --dsos "$(basename "$LOCKSTEP")" --stdio -g none 2>/dev/null |
  grep -E '^ +[0-9.]+%' | head -"$TOP"
