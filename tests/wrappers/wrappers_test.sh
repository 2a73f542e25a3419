#!/bin/bash
# wrappers_test.sh LOCKSTEP SRC_DIR WORKDIR: a project's own wrappers (lockstep-wrappers.json).
# project/user.cpp calls NCCL only through comm_lib.h, a class and a dlsym-filled table whose
# bodies lint never sees: silent without the wrappers file, four findings with it (loaded
# beside the compilation database with -p, or given by --rules, which then adds to the
# default rules). Each file of bad/ is an input error: exit 2, naming the file and the key.
set -u
lockstep=$1; src=$2; work=$3
proj=$src/project
rm -rf "$work"; mkdir -p "$work/db" "$work/plain"
cat >"$work/db/compile_commands.json" <<JSON
[{"directory": "$proj", "file": "user.cpp", "arguments": ["c++", "-std=c++17", "-I/usr/local/cuda/include", "-c", "user.cpp"]}]
JSON
cp "$work/db/compile_commands.json" "$work/plain/"
cp "$proj/lockstep-wrappers.json" "$work/db/"
fail=0
want=('user.cpp:7:3: warning: root argument .*\[rank-dependent-argument\]'
      'user.cpp:9:5: warning: .*\[rank-divergent-collective\]'
      'user.cpp:12:5: warning: .*\[unbalanced-group\]'
      'user.cpp:14:3: warning: count argument .*\[rank-dependent-argument\]')
check() { # name rc output
  local ok=1 w
  for w in "${want[@]}"; do grep -Eq -- "$w" <<<"$3" || ok=0; done
  [ "$(grep -c 'warning: .*\[[a-z-]*\]$' <<<"$3")" = 4 ] || ok=0
  if [ "$2" != 1 ] || [ $ok = 0 ]; then
    echo "FAIL: $1: want exit 1 and the four findings (rc=$2)"; echo "$3"; fail=1
  else echo "ok: $1"; fi
}
out=$("$lockstep" lint -p "$work/db" 2>&1); check "-p loads DIR/lockstep-wrappers.json" $? "$out"
out=$("$lockstep" lint --rules "$proj/lockstep-wrappers.json" "$proj/user.cpp" -- -std=c++17 -I/usr/local/cuda/include 2>&1)
check "--rules FILE adds the wrappers to the default rules" $? "$out"
out=$("$lockstep" lint -p "$work/db" --rules "$work/db/lockstep-wrappers.json" 2>&1)
check "-p with its own wrappers file also given by --rules: loaded once" $? "$out"
out=$("$lockstep" lint -p "$work/plain" 2>&1); rc=$?
if [ $rc -ne 0 ] || grep -q 'warning:.*\[' <<<"$out"; then
  echo "FAIL: without the wrappers file the calls are unknown: want exit 0, no findings (rc=$rc)"; echo "$out"; fail=1
else echo "ok: without the wrappers file, silent"; fi
bad() { # file regex
  local f=$src/bad/$1 out rc
  out=$("$lockstep" lint --rules "$f" "$proj/user.cpp" -- -std=c++17 -I/usr/local/cuda/include 2>&1); rc=$?
  if [ $rc -ne 2 ] || ! grep -Eq -- "$2" <<<"$out"; then
    echo "FAIL: --rules bad/$1: want exit 2 and /$2/ (rc=$rc)"; echo "$out"; fail=1
  else echo "ok: --rules bad/$1"; fi
  mkdir -p "$work/bad_$1"
  cp "$work/db/compile_commands.json" "$work/bad_$1/"
  cp "$f" "$work/bad_$1/lockstep-wrappers.json"
  local r2=${2//$1/lockstep-wrappers.json}
  out=$("$lockstep" lint -p "$work/bad_$1" 2>&1); rc=$?
  if [ $rc -ne 2 ] || ! grep -Eq -- "$r2" <<<"$out"; then
    echo "FAIL: -p with bad/$1 as lockstep-wrappers.json: want exit 2 and /$r2/ (rc=$rc)"; echo "$out"; fail=1
  else echo "ok: -p with bad/$1"; fi
}
bad syntax.json 'syntax.json:3:37: error: invalid JSON'
bad shape.json 'shape.json: error: wrappers: must be an object'
bad as_missing.json 'as_missing.json: error: wrappers.NcclApi::allReduce: missing required key "as"'
bad as_unknown.json 'as_unknown.json: error: wrappers.NcclApi::allReduce: "as" names "ncclAllReduced", which no rules file describes'
bad arg_name.json 'arg_name.json: error: wrappers.NcclApi::allReduce.args.cnt: ncclAllReduce has no argument "cnt"'
bad arg_index.json "arg_index.json: error: wrappers.NcclApi::allReduce.args.count: must be the wrapper's parameter index"
exit $fail
