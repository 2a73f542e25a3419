#!/usr/bin/env bash
# cdb_gcc_flags.sh — `lockstep lint -p` on a compile_commands.json as a GCC + mpicc build
# writes it (hdf5's CMake database, reduced): GCC-only flags (-fstdarg-opt,
# -fdiagnostics-urls=never) must be dropped with a note instead of failing the TU, GCC's
# warning options must not be reported, and mpi.h must be found through the wrapper's own
# include dirs (the entry names only `mpicc`). Usage: cdb_gcc_flags.sh LOCKSTEP SRC WORKDIR
set -u
lockstep=$1 src=$2 work=$3
mpicc=$(command -v mpicc) || { echo "mpicc not installed: skipped"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 2
cp "$src" "$work/t.c"
cat > "$work/compile_commands.json" <<JSON
[{"directory": "$work",
  "command": "$mpicc -D_GNU_SOURCE -std=c99 -fstdarg-opt -fdiagnostics-urls=never -fno-diagnostics-color -fmessage-length=0 -O2 -g -Wlogical-op -Wsync-nand -Wstack-usage=8192 -std=gnu99 -o t.o -c $work/t.c",
  "file": "$work/t.c"}]
JSON
"$lockstep" lint --format=json -p "$work" > "$work/out.json" 2> "$work/err.txt"
rc=$?
fail=0
[ "$rc" = 1 ] || { echo "FAIL: exit $rc, expected 1 (findings)"; fail=1; }
grep -q "note: dropping '-fstdarg-opt'" "$work/err.txt" || { echo "FAIL: no note for -fstdarg-opt"; fail=1; }
grep -q "note: dropping '-fdiagnostics-urls=never'" "$work/err.txt" || { echo "FAIL: no note for -fdiagnostics-urls=never"; fail=1; }
grep -q "unknown warning option" "$work/err.txt" && { echo "FAIL: GCC warning options reported"; fail=1; }
python3 - "$work/out.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
tus = d["tus"]
if len(tus) != 1 or not tus[0]["ok"] or tus[0]["errors"]:
    print("FAIL: the TU did not parse cleanly:", tus); sys.exit(1)
rules = sorted(f["rule"] for f in d["findings"])
if "rank-divergent-collective" not in rules:
    print("FAIL: the known finding is missing:", rules); sys.exit(1)
PY
[ "$fail" = 0 ] || { cat "$work/err.txt"; exit 1; }
echo "ok: GCC-only flags dropped, mpicc's include dirs used, finding reported"
