#!/bin/bash
# install_test.sh BUILDDIR SRCDIR WORKDIR — `cmake --install` into a temporary prefix, then
# the installed pieces are used as a user would: the binary lints a fixture with the installed
# rules (not the source tree's: the installed docs are altered to tell them apart), `run`
# preloads the installed library, the man page covers every option of every --help, and the
# CMake package and pkg-config file let a consumer project build against the library.
set -u
build=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
prefix=$work/prefix
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { echo "FAIL: cmake --install"; cat "$work/install.log"; exit 1; }
ls=$prefix/bin/lockstep
lib=$(ls "$prefix"/lib*/liblockstep.so "$prefix"/lib/*/liblockstep.so 2>/dev/null | head -1)
libdir=$(dirname "$lib")
for f in "$ls" "$lib" "$prefix/share/lockstep/rules/nccl.json" "$prefix/share/lockstep/rules/docs/lint_rules.json" \
         "$prefix/share/man/man1/lockstep.1" "$libdir/cmake/lockstep/lockstepConfig.cmake" \
         "$libdir/cmake/lockstep/lockstepConfigVersion.cmake" "$libdir/pkgconfig/lockstep.pc" \
         "$prefix/include/lockstep/trace_format.h"; do
  [ -e "$f" ] || bad "not installed: ${f#$work/}"
done
[ $fail = 0 ] && echo "ok: installed $(cd "$prefix" && find . -type f | wc -l) files"

# the installed binary uses the installed data
sed -i 's/"short": "Send\/receive pair issued outside a group"/"short": "INSTALLED COPY"/' "$prefix/share/lockstep/rules/docs/lint_rules.json"
env -u LOCKSTEP_RULES_DIR "$ls" rules | grep -q "^ungrouped-p2p  *INSTALLED COPY" || bad "lockstep rules does not read the installed rules"
out=$(cd "$work" && env -u LOCKSTEP_RULES_DIR "$ls" lint "$src/fixtures/nccl/rank_skip.c" -- -I/usr/local/cuda/include 2>&1); rc=$?
[ $rc -eq 1 ] && grep -Eq "rank_skip\.c:[0-9]+:[0-9]+: warning: .*\[rank-divergent-collective\]" <<<"$out" ||
  bad "installed lint on a fixture (rc=$rc): $out"
out=$(cd "$work" && "$ls" lint --format=sarif "$src/fixtures/nccl/ungrouped_p2p.c" -- -I/usr/local/cuda/include 2>&1)
grep -q '"INSTALLED COPY"' <<<"$out" || bad "SARIF rule metadata not from the installed docs"
# run finds the installed library (and preloads it)
"$ls" run --help >"$work/run-help.txt" 2>&1 || bad "run --help"
pre=$(cd "$work" && env -u LOCKSTEP_LIB "$ls" run -- sh -c 'echo "$LD_PRELOAD"' 2>&1)
[ "$pre" = "$(realpath "$lib")" ] || bad "run preloads '$pre', wanted the installed $(realpath "$lib")"
[ $fail = 0 ] && echo "ok: installed binary: lint, rules, sarif with installed data; run preloads $pre"

# the man page is true to --help: every subcommand and every long option appears in it
man=$(sed 's/\\-/-/g' "$prefix/share/man/man1/lockstep.1")
for c in $("$ls" --help | awk '/^commands:/{on=1; next} on && !NF {exit} on {print $1}'); do
  grep -q "^\.SS $c" <<<"$man" || bad "man page lacks a section for '$c'"
  h=$c; [ "$c" = trace ] && h="trace export"
  for o in $("$ls" $h --help 2>&1 | grep -oE -- '--[a-z][a-z-]*[a-z]' | sort -u); do
    grep -qF -- "$o" <<<"$man" || bad "man page lacks '$c $o'"
  done
done
if command -v man >/dev/null; then
  MANWIDTH=80 man -l "$prefix/share/man/man1/lockstep.1" 2>"$work/man.err" | grep -q "lockstep lint" || bad "man -l cannot render it"
  [ -s "$work/man.err" ] && bad "man warnings: $(cat "$work/man.err")"
fi
[ $fail = 0 ] && echo "ok: man page covers every subcommand and option"

# pkg-config (relocatable: ${pcfiledir})
export PKG_CONFIG_PATH=$libdir/pkgconfig
if command -v pkg-config >/dev/null; then
  flags=$(pkg-config --cflags --libs lockstep) || bad "pkg-config lockstep"
  pl=$(pkg-config --variable=preload lockstep)
  [ "$(realpath "$pl")" = "$(realpath "$lib")" ] || bad "pkg-config preload=$pl"
  [ "$(pkg-config --modversion lockstep)" = "$("$ls" --version | awk '{print $2}')" ] || bad "pkg-config version"
  printf '#include <lockstep/trace_format.h>\nint main(void) { return 0; }\n' >"$work/pc.c"
  cc "$work/pc.c" -o "$work/pc" $flags -Wl,-rpath,"$libdir" 2>"$work/pc.err" && "$work/pc" || bad "build with pkg-config flags: $(cat "$work/pc.err")"
  [ $fail = 0 ] && echo "ok: pkg-config: $flags"
fi

# CMake package
mkdir -p "$work/consumer"
cat >"$work/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(lockstep 0.1 REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE lockstep::lockstep)
message(STATUS "LOCKSTEP_EXECUTABLE=${LOCKSTEP_EXECUTABLE}")
message(STATUS "LOCKSTEP_PRELOAD_LIBRARY=${LOCKSTEP_PRELOAD_LIBRARY}")
message(STATUS "LOCKSTEP_RULES_DIR=${LOCKSTEP_RULES_DIR}")
CM
printf '#include <lockstep/trace_format.h>\nint main(void) { return 0; }\n' >"$work/consumer/main.c"
if cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" >"$work/consumer.log" 2>&1 &&
   cmake --build "$work/consumer/build" >>"$work/consumer.log" 2>&1 && "$work/consumer/build/consumer"; then
  grep -q "LOCKSTEP_EXECUTABLE=$prefix/bin/lockstep" "$work/consumer.log" || bad "LOCKSTEP_EXECUTABLE wrong"
  grep -q "LOCKSTEP_PRELOAD_LIBRARY=$lib" "$work/consumer.log" || bad "LOCKSTEP_PRELOAD_LIBRARY wrong"
  # (--as-needed may drop the library from a program that calls none of its functions)
  grep -q -- "$lib" "$work/consumer/build/CMakeFiles/consumer.dir/link.txt" || bad "consumer not linked with liblockstep.so"
  [ $fail = 0 ] && echo "ok: find_package(lockstep) builds a consumer linked with lockstep::lockstep"
else
  bad "consumer project"; cat "$work/consumer.log"
fi
exit $fail
