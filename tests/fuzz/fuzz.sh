#!/bin/sh
# tests/fuzz/fuzz.sh — build the libFuzzer harnesses (tests/fuzz/fuzz_*.c) with clang-19
# directly, so the fuzz test works in a gcc build, then run each for SECONDS and fail
# on any crash, leak, sanitizer report, timeout or broken error contract.
# usage: fuzz.sh SRCDIR WORKDIR SECONDS [TARGET...]   (targets: trace rules compare cdb)
# Env: LS_FUZZ_CC (default clang-19); LS_SEED_DIRS: directories of real traces to seed
# from (one directory per run), else LS_BUILD's recorder makes some; LS_FUZZ_OPTS: extra
# libFuzzer options. Exit 77 = skipped.
set -eu
SRC=$(cd "$1" && pwd)
WORK=$2
SECS=$3
shift 3
TARGETS=${*:-trace rules compare cdb}
CC=${LS_FUZZ_CC:-clang-19}
if ! command -v "$CC" > /dev/null 2>&1; then
  echo "fuzz: $CC not found: skipped (install clang-19 and libclang-rt-19-dev; .ci/setup does)"
  exit 77
fi
mkdir -p "$WORK/obj" "$WORK/bin" "$WORK/seeds" "$WORK/corpus" "$WORK/crashes"
WORK=$(cd "$WORK" && pwd)

# -O1 -g: readable reports; UB is fatal so libFuzzer keeps the input.
CFLAGS="-std=gnu11 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
  -I$SRC/runtime -I$SRC/runtime/tools -I$SRC/cli -I$SRC/common -I$SRC/rules -I$SRC/analyzer -I$SRC/analyzer/checks -I$SRC/tests/fuzz -I/usr/lib/llvm-19/include
  -DLOCKSTEP_FUZZ_RULES_DIR=\"$SRC/rules\" -DLOCKSTEP_VERSION=\"fuzz\"
  -DLOCKSTEP_BUILD_LIBDIR=\"/nonexistent\" -DLOCKSTEP_INSTALL_LIBDIR=\"/nonexistent\""

# The code under test: the trace tools (runtime/tools, the digest indexer, common/) and
# the rules library with its JSON reader and arena.
objs=""
for f in "$SRC"/runtime/tools/*.c "$SRC/runtime/trace_index.c" "$SRC"/common/*.c "$SRC/rules/rules.c"; do
  o="$WORK/obj/$(basename "$(dirname "$f")")_$(basename "$f" .c).o"
  # shellcheck disable=SC2086
  $CC $CFLAGS -fsanitize=fuzzer-no-link -c "$f" -o "$o"
  objs="$objs $o"
done
# lint's compile_commands.json check (no libclang call in it: only its headers)
# shellcheck disable=SC2086
$CC $CFLAGS -fsanitize=fuzzer-no-link -c "$SRC/analyzer/cdb_check.c" -o "$WORK/obj/analyzer_cdb_check.o"
tools_objs=$(echo "$objs" | tr ' ' '\n' | grep '/tools_\|/runtime_\|/common_\|/rules_' | tr '\n' ' ')
rules_objs="$WORK/obj/rules_rules.o $WORK/obj/common_json_file.o $WORK/obj/common_arena.o $WORK/obj/common_clock.o $WORK/obj/common_data_dir.o $WORK/obj/tools_apidb.o"
for t in $TARGETS; do
  case $t in
    rules) deps=$rules_objs ;;
    cdb) deps="$WORK/obj/analyzer_cdb_check.o $WORK/obj/common_json_file.o" ;;
    *) deps=$tools_objs ;;
  esac
  # shellcheck disable=SC2086
  $CC $CFLAGS -fsanitize=fuzzer "$SRC/tests/fuzz/fuzz_$t.c" $deps -lcjson -ldl -lpthread -o "$WORK/bin/fuzz_$t"
done

# Real traces to seed from: the recorder's test program, one run per divergence kind.
# LS_BUILD: a build tree of this project (the ctest entry passes it).
if [ -n "${LS_BUILD:-}" ]; then
  LS_LIB=$LS_BUILD/runtime/liblockstep.so
  LS_PROG=$LS_BUILD/tests/runtime/ls_prog_nccl
  LS_FAKECUDA=$LS_BUILD/tests/runtime/fakecuda
fi
if [ -z "${LS_SEED_DIRS:-}" ] && [ -f "${LS_LIB:-}" ] && [ -x "${LS_PROG:-}" ]; then
  rm -rf "$WORK/runs"
  for m in none op count dtype redop root skip extra; do
    for r in 0 1; do
      RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_CAPACITY=16 LOCKSTEP_TRACE_DIR="$WORK/runs/$m" \
        LD_LIBRARY_PATH="${LS_FAKECUDA:-}" LD_PRELOAD="$LS_LIB" "$LS_PROG" diverge $m > /dev/null 2>&1 || true
    done
    LS_SEED_DIRS="${LS_SEED_DIRS:-} $WORK/runs/$m"
  done
fi

# Seeds: the rules files as they are; real traces (raw, and in fuzz_compare's compact
# form) when LS_SEED_DIRS names runs; hand-made starting points otherwise.
mkdir -p "$WORK/seeds/rules" "$WORK/seeds/trace" "$WORK/seeds/compare" "$WORK/seeds/cdb"
printf '[\n {"directory": "/w", "file": "a.c", "arguments": ["cc", "-c", "a.c"], "output": "a.o"},\n {"directory": "/w", "file": "b.c", "command": "cc -c b.c"}\n]\n' \
  > "$WORK/seeds/cdb/two.json"
cp "$SRC"/rules/*.json "$WORK/seeds/rules/"
printf '{"api":"nccl","functions":[{"name":"f","kind":"collective","args":[{"name":"c","type":"int","role":"count"}],"in_place":{"buffer":"c"}}],"rank_sources":[{"call":"g","out_arg":0}],"noreturn":["exit"],"enums":{"result":{"ok":0}},"success":"ok"}' \
  > "$WORK/seeds/rules/small.json"
if command -v python3 > /dev/null 2>&1; then
  # shellcheck disable=SC2086
  python3 "$SRC/tests/fuzz/seeds.py" "$WORK/seeds" ${LS_SEED_DIRS:-}
fi

status=0
for t in $TARGETS; do
  mkdir -p "$WORK/corpus/$t"
  case $t in
    trace) opts="-max_len=300000" ;;
    rules) opts="-max_len=65536 -dict=$SRC/tests/fuzz/rules.dict" ;;
    compare) opts="-max_len=8192" ;;
    cdb) opts="-max_len=4096" ;;
  esac
  # Inputs that once failed (tests/fuzz/regress/TARGET/) run first, every time.
  regress=
  [ -d "$SRC/tests/fuzz/regress/$t" ] && regress="$SRC/tests/fuzz/regress/$t"
  echo "fuzz: $t for ${SECS}s"
  # shellcheck disable=SC2086
  if ! "$WORK/bin/fuzz_$t" -max_total_time="$SECS" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$WORK/crashes/$t-" $opts ${LS_FUZZ_OPTS:-} "$WORK/corpus/$t" "$WORK/seeds/$t" $regress \
      > "$WORK/$t.log" 2>&1; then
    echo "FAIL fuzz_$t: a crash, leak, timeout or contract failure; the input is in $WORK/crashes/" >&2
    tail -n 60 "$WORK/$t.log" >&2
    status=1
  else
    grep -E '^#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss' "$WORK/$t.log" || tail -n 3 "$WORK/$t.log"
  fi
done
exit $status
