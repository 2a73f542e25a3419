#!/usr/bin/env bash
# lint_same.sh — does a changed `lockstep lint` still print byte-identical --format=json,
# text output and exit status to a base build? Speed work must not change a finding: run after
# every step. Inputs: every fixture one by one, the .c fixtures in one invocation,
# tests/realcode, bench/lint_realworld.c, the 20k-line generated TU and the K=1/4/16 TUs.
# Usage: bench/lint_same.sh BASE_LOCKSTEP NEW_LOCKSTEP   (env: JOBS, default 2)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 BASE_LOCKSTEP NEW_LOCKSTEP" >&2; exit 2; }
base=$1 new=$2
JOBS=${JOBS:-2}
W=$(mktemp -d /tmp/lint_same.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$W"' EXIT
flags=(-I/usr/local/cuda/include -I/usr/lib/x86_64-linux-gnu/openmpi/include
       -I/usr/lib/x86_64-linux-gnu/openmpi/include/openmpi)

# the generated TUs (fixed seed: the generator is deterministic)
python3 "$root/bench/lint_gen.py" --lines 20000 -o "$W/gen20k.c" >/dev/null 2>&1
for k in 1 4 16; do
  python3 "$root/bench/lint_gen.py" --single $k --base-units 8 -o "$W/single$k.c" >/dev/null 2>&1
done

# one job per line: NAME|extra-flags|files... (not tabs: read collapses empty tab fields)
{
  for f in $(cd "$root" && find fixtures -type f \( -name '*.c' -o -name '*.cu' -o -name '*.cpp' \) | sort); do
    printf '%s||%s\n' "$f" "$root/$f"
  done
  printf 'all-c||%s\n' "$(cd "$root" && find fixtures -type f -name '*.c' | sort | sed "s|^|$root/|" | tr '\n' ' ')"
  for f in "$root"/tests/realcode/*.c "$root"/tests/realcode/*.cpp; do
    std=; case $f in *.cpp) std=-std=c++17 ;; esac
    printf 'realcode/%s|%s|%s\n' "$(basename "$f")" "$std" "$f"
  done
  printf 'lint_realworld.c||%s\n' "$root/bench/lint_realworld.c"
  printf 'gen20k.c||%s\n' "$W/gen20k.c"
  for k in 1 4 16; do printf 'single%s.c||%s\n' $k "$W/single$k.c"; done
} > "$W/jobs"

one() { # one LINE: run both binaries, compare
  IFS='|' read -r name extra files <<< "$1"
  key=$(printf '%s' "$name" | tr '/ ' '__')
  # shellcheck disable=SC2086
  "$base" lint --format=json $files -- "${flags[@]}" $extra > "$W/$key.base" 2>/dev/null; rb=$?
  # shellcheck disable=SC2086
  "$new" lint --format=json $files -- "${flags[@]}" $extra > "$W/$key.new" 2>/dev/null; rn=$?
  # and the default text output (stdout and stderr: findings, carets, parse errors)
  # shellcheck disable=SC2086
  "$base" lint $files -- "${flags[@]}" $extra > "$W/$key.tbase" 2>&1
  # shellcheck disable=SC2086
  "$new" lint $files -- "${flags[@]}" $extra > "$W/$key.tnew" 2>&1
  if [ ! -s "$W/$key.base" ]; then echo "DIFF $name: base printed nothing (exit $rb)"; return; fi
  if [ $rb -ne $rn ] || ! cmp -s "$W/$key.base" "$W/$key.new"; then
    echo "DIFF $name (exit $rb vs $rn)"; diff <(head -c 3000 "$W/$key.base") <(head -c 3000 "$W/$key.new") | head -5
  elif ! cmp -s "$W/$key.tbase" "$W/$key.tnew"; then
    echo "DIFF $name (text output)"; diff "$W/$key.tbase" "$W/$key.tnew" | head -5
  else
    echo "same $name"
  fi
}
# bash cannot export arrays: flags travel as a string and are split again inside
export -f one; export base new W; export flags_s="${flags[*]}"
n=$(wc -l < "$W/jobs")
out=$(tr '\n' '\0' < "$W/jobs" | xargs -0 -P "$JOBS" -I{} bash -c 'flags=($flags_s); one "$1"' _ {})
same=$(grep -c '^same ' <<< "$out")
if grep -q '^DIFF' <<< "$out"; then
  grep -A5 '^DIFF' <<< "$out"
  echo "lint_same: $same of $n inputs identical — DIFFERENT" >&2; exit 1
fi
echo "lint_same: all $n inputs byte-identical (json, text, exit status)"
