#!/bin/bash
# cdb_test.sh LOCKSTEP INPUTS_DIR WORKDIR: lint through a generated compile_commands.json.
# a.c defines the rank helper, b.c branches on it: the finding in b.c needs the summary
# from a.c, i.e. analysis across TUs. Also: only the FILEs named are analyzed, a CUDA entry
# with nvcc flags parses host-side, and an empty or missing database is an input error.
set -u
lockstep=$1; inputs=$2; work=$3
rm -rf "$work"; mkdir -p "$work/db" "$work/empty"
cat >"$work/db/compile_commands.json" <<JSON
[
 {"directory": "$inputs", "file": "cdb_a.c", "arguments": ["cc", "-c", "-I/usr/local/cuda/include", "-o", "a.o", "cdb_a.c"]},
 {"directory": "$inputs", "file": "$inputs/cdb_b.c", "command": "/usr/bin/gcc -MD -MF b.d -Werror -I/usr/local/cuda/include -c $inputs/cdb_b.c -o b.o"},
 {"directory": "$inputs", "file": "cdb_c.cu", "command": "/usr/local/cuda/bin/nvcc -x cu -arch=sm_90 -gencode arch=compute_90,code=sm_90 --expt-relaxed-constexpr -Xcompiler -fPIC,-O2 -I/usr/local/cuda/include -c cdb_c.cu -o c.o"}
]
JSON
echo '[]' >"$work/empty/compile_commands.json"
fail=0
out=$("$lockstep" lint -p "$work/db" --format=json 2>&1); rc=$?
if [ $rc -ne 1 ] || ! grep -q '"line":\s*9' <<<"$out" || ! grep -q 'cdb_b.c' <<<"$out"; then
  echo "FAIL: whole database: want exit 1 and a finding at cdb_b.c:9 (rc=$rc)"; echo "$out"; fail=1
else echo "ok: whole database, cross-TU finding"; fi
out=$("$lockstep" lint -p "$work/db" --format=json "$inputs/cdb_a.c" 2>&1); rc=$?
n=$(grep -c '"ok":' <<<"$out")
if [ $rc -ne 0 ] || [ "$n" != 1 ]; then
  echo "FAIL: named file: want exit 0 and one TU (rc=$rc, tus=$n)"; echo "$out"; fail=1
else echo "ok: only the named entry"; fi
out=$("$lockstep" lint -p "$work/db" "$inputs/cdb_c.cu" 2>&1); rc=$?
if [ $rc -ne 1 ] || ! grep -q 'cdb_c.cu:9:5: warning' <<<"$out" || grep -q 'error' <<<"$out"; then
  echo "FAIL: CUDA entry with nvcc flags: want exit 1, a finding at cdb_c.cu:9, no errors (rc=$rc)"; echo "$out"; fail=1
else echo "ok: CUDA entry parsed host-side with nvcc flags translated"; fi
out=$("$lockstep" lint -p "$work/empty" 2>&1); rc=$?
if [ $rc -ne 2 ] || ! grep -q 'compile_commands.json: error:' <<<"$out"; then
  echo "FAIL: empty database: want exit 2 and a message (rc=$rc)"; echo "$out"; fail=1
else echo "ok: empty database"; fi
out=$("$lockstep" lint -p "$work/nonexistent" 2>&1); rc=$?
if [ $rc -ne 2 ] || ! grep -q 'cannot load' <<<"$out"; then
  echo "FAIL: missing database: want exit 2 (rc=$rc)"; echo "$out"; fail=1
else echo "ok: missing database"; fi
exit $fail
