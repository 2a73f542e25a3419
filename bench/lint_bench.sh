#!/usr/bin/env bash
# lint_bench.sh — benchmark `lockstep lint` against `clang-19 -fsyntax-only` on the
# same TUs with the same flags: the bundled fixtures, a real-world-style program,
# one large generated TU and a single function scaled 1x/4x/16x (linearity).
# Prints a markdown table (paste into bench/RESULTS.md). Not a test: no pass/fail.
# Env: LOCKSTEP (binary, default build/lockstep), CLANG (default clang-19),
#      RUNS (default 5), LINES (generated TU size, default 20000),
#      BASE_UNITS (1x function size, default 8), WORK (scratch dir),
#      INSTR (1: also count instructions with valgrind, if installed; default 1),
#      FIXTURES (0: skip the per-fixture runs, the slowest part; default 1),
#      PIN (a CPU number: every timed run on that CPU only, lint and clang alike; on a
#      shared VM lint's threads taking turns are moved between CPUs more than clang's one).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
LOCKSTEP=${LOCKSTEP:-$root/build/lockstep}
CLANG=${CLANG:-$(command -v clang-19 || echo /usr/lib/llvm-19/bin/clang)}
RUNS=${RUNS:-5}
LINES=${LINES:-20000}
BASE_UNITS=${BASE_UNITS:-8}
WORK=${WORK:-$root/build/bench-lint}
INSTR=${INSTR:-1}
instr=()
if [ "$INSTR" = 1 ] && command -v valgrind >/dev/null; then instr=(--instr); fi
mkdir -p "$WORK"

die() { echo "lint_bench.sh: $*" >&2; exit 2; }
[ -x "$LOCKSTEP" ] || die "$LOCKSTEP: not built (cmake -S . -B build && cmake --build build)"
[ -x "$CLANG" ] || die "$CLANG: not found (apt-get install clang-19)"
[ -x /usr/bin/time ] || die "/usr/bin/time: not found (apt-get install time)"
pin=()
if [ -n "${PIN:-}" ]; then
  command -v taskset >/dev/null || die "PIN=$PIN: taskset not found"
  pin=(--pin "$PIN")
fi

# The phase shim needs libclang's header only; built here, outside the project
# build, because it is a measuring instrument and not part of lockstep.
llvm_inc=$(dirname "$(dirname "$(readlink -f "$CLANG")")")/include
shim=$WORK/lint_phase.so
cc -O2 -fPIC -shared -Wall -Wextra -I"$llvm_inc" -o "$shim" bench/lint_phase.c -ldl ||
  die "cannot build the phase shim (bench/lint_phase.c)"

python3 bench/lint_gen.py --lines "$LINES" -o "$WORK/gen_large.c"
series=()
for k in 0 1 4 16; do
  python3 bench/lint_gen.py --single "$k" --base-units "$BASE_UNITS" -o "$WORK/gen_single_$k.c"
  series+=(--series "$k=$WORK/gen_single_$k.c")
done

fixtures=()
if [ "${FIXTURES:-1}" != 0 ]; then
  mapfile -t fixtures < <(find fixtures -type f \( -name '*.c' -o -name '*.cu' \) 2>/dev/null | sort)
fi

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) cores, ${cpu}, $(uname -r);" \
     "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "lockstep: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')" \
     "(${LOCKSTEP#$root/}); clang: $("$CLANG" --version | head -1)"
echo "Command: RUNS=$RUNS LINES=$LINES BASE_UNITS=$BASE_UNITS INSTR=$INSTR FIXTURES=${FIXTURES:-1}${PIN:+ PIN=$PIN} bench/lint_bench.sh"
echo
python3 bench/lint_measure.py --lockstep "$LOCKSTEP" --clang "$CLANG" --phase-shim "$shim" \
  --runs "$RUNS" --json "$WORK/results.json" "${instr[@]}" "${pin[@]}" \
  --fixtures "${fixtures[@]}" \
  --tu "real-world-style: bench/lint_realworld.c=bench/lint_realworld.c" \
  --tu "generated: lint_gen.py --lines $LINES=$WORK/gen_large.c" \
  "${series[@]}"
echo
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg); raw data: ${WORK#$root/}/results.json"
