#!/bin/bash
# buildsys_test.sh LOCKSTEP SRCDIR WORKDIR — `lint -p` on compilation databases made by the
# real tools: CMake (CMAKE_EXPORT_COMPILE_COMMANDS) and bear (`bear -- make`), for the sample
# project tests/data/cdb_project (its step.c parses only with the database's flags, and its
# finding needs rank.c's summary). Then -j: the same output as -j 1 on the NCCL fixtures, a
# summary on stderr that keeps JSON stdout clean, and a progress line only on a terminal.
set -u
ls=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
proj=$src/tests/data/cdb_project
fail=0
bad() { echo "FAIL $cur: $*"; echo "--- stdout"; cat "$work/out"; echo "--- stderr"; cat "$work/err"; fail=1; }
lint() { "$ls" lint "$@" >"$work/out" 2>"$work/err"; rc=$?; }
finding='step\.c:9:5: warning: .*\[rank-divergent-collective\]'

cur=cmake
cmake -S "$proj" -B "$work/cmake" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/cmake.log" 2>&1 ||
  { echo "FAIL: cmake configure"; cat "$work/cmake.log"; exit 1; }
lint -p "$work/cmake"
if [ $rc -ne 1 ] || ! grep -Eq "$finding" "$work/out" || ! grep -Eq "rank\.c:5:3: note: rank-dependent value" "$work/out"; then
  bad "want exit 1 and the cross-TU finding (rc=$rc)"
elif ! grep -Eq '^lockstep lint: 2 TUs, 2 functions, 1 finding \(rank-divergent-collective: 1\), [0-9.]+ s$' "$work/err"; then
  bad "want the summary line on stderr"
else echo "ok: CMake compile_commands.json"; fi

cur=bear
cp -r "$proj" "$work/bearproj"
(cd "$work/bearproj" && bear -- make -s CC=gcc) >"$work/bear.log" 2>&1 ||
  { echo "FAIL: bear -- make"; cat "$work/bear.log"; exit 1; }
lint -p "$work/bearproj"
if [ $rc -ne 1 ] || ! grep -Eq "$finding" "$work/out" || ! grep -q "2 TUs" "$work/err"; then
  bad "want exit 1, the finding and 2 TUs (rc=$rc)"
else echo "ok: bear compile_commands.json"; fi
cur=bear_named
lint -p "$work/bearproj" --format=json "$work/bearproj/src/rank.c"
if [ $rc -ne 0 ] || ! grep -q "1 TU," "$work/err"; then bad "only the named file (rc=$rc)"; else echo "ok: -p with a named file"; fi

# -j: a database of every NCCL fixture, analyzed on 1 and on 3 threads
python3 - "$src" "$work/fx" <<'PY'
import glob, json, os, sys
src, out = sys.argv[1:]
os.makedirs(out, exist_ok=True)
files = sorted(glob.glob(os.path.join(src, "fixtures/nccl/*.c")))
db = [{"directory": os.path.join(src, "fixtures/nccl"), "file": f,
       "arguments": ["cc", "-I/usr/local/cuda/include", "-c", f, "-o", "/dev/null"]} for f in files]
json.dump(db, open(os.path.join(out, "compile_commands.json"), "w"), indent=1)
PY
n=$(grep -c '"file"' "$work/fx/compile_commands.json")
cur=jobs1; lint -p "$work/fx" --format=json -j 1; rc1=$rc; cp "$work/out" "$work/j1.json"; cp "$work/err" "$work/j1.err"
cur=jobs3; lint -p "$work/fx" --format=json -j 3; cp "$work/out" "$work/j3.json"
if [ $rc1 -ne 1 ] || [ $rc -ne 1 ]; then bad "want exit 1 both times (rc -j1 $rc1, -j3 $rc)"
elif ! cmp -s "$work/j1.json" "$work/j3.json"; then bad "-j 3 output differs from -j 1"; diff "$work/j1.json" "$work/j3.json" | head -20
elif ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["tus"]) == int(sys.argv[2]) and d["findings"]' "$work/j3.json" "$n"; then
  bad "stdout is not the JSON report of $n TUs"
elif ! grep -Eq "^lockstep lint: $n TUs, [0-9]+ functions, [0-9]+ findings \(rank-divergent-collective: [0-9]+, .*\)(, [0-9]+ on error paths)?, [0-9.]+ s$" "$work/err"; then
  bad "want the summary with findings by rule on stderr"
elif grep -q $'\r' "$work/err"; then bad "progress line written to a non-terminal"
else echo "ok: -j 3 gives the -j 1 result for $n TUs; $(tail -1 "$work/err")"; fi
cur=quiet; lint -p "$work/cmake" -q
[ $rc -eq 1 ] && ! grep -q "TUs" "$work/err" && echo "ok: -q silences the summary" || bad "-q"

# a terminal gets the progress line (a pty from Python's standard library)
cur=tty
python3 -c 'import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))' \
  "$ls" lint -p "$work/fx" -j 2 >"$work/out" 2>"$work/err"; rc=$?
if [ $rc -ne 1 ] || ! grep -aq "\[$n/$n\] " "$work/out" || ! grep -aq "\[1/$n\] " "$work/out"; then
  bad "want [1/$n] .. [$n/$n] progress on the terminal (rc=$rc)"
else echo "ok: progress on a terminal"; fi
exit $fail
