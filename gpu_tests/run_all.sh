#!/usr/bin/env bash
# run_all.sh — the whole GPU suite as one command, on a machine with NRANKS GPUs:
# builds lockstep (no analyzer; cJSON from the carried Debian .debs when the system
# has none), builds the gpu_tests programs, the benchmark and the matrix fixtures,
# then runs suite.py (items 1-5, bounded: the suite stops itself before BUDGET s).
#   gpu_tests/run_all.sh NRANKS OUTDIR          full run; results in OUTDIR
#   gpu_tests/run_all.sh --compile-only [DIR]   only compile the C programs (no GPU);
#                                               exits 77 (skip) when nvcc/mpicc/nccl.h are missing
# Environment: GT_WORK (scratch, default /tmp/gt-work), GT_BUDGET (s, default 500 from
# start to the end of the suite), GT_STEPS (comma list, default all), GT_BASE_ROOT
# (a baseline tree, see below), GT_DEFER_US, GT_BENCH_ROUNDS, GT_TIMING_CYCLES, GT_AB_PROCS (suite.py).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export NCCL_DEBUG=${NCCL_DEBUG:-WARN} # NCCL's own warnings are one of the reporters compared
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
START=$(date +%s)

find_cuda() {
  local nvcc
  nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null) || return 1
  CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
  NCCL_INC=""
  for d in /usr/include "$CUDA_HOME/include"; do [ -f "$d/nccl.h" ] && NCCL_INC=$d && break; done
  [ -n "$NCCL_INC" ] && command -v mpicc >/dev/null
}

# build_programs BINDIR: the gpu_tests programs and the benchmark, -Werror (our code).
build_programs() {
  local bin=$1 rc=0
  mkdir -p "$bin"
  local cflags=(-std=gnu11 -g -O2 -Wall -Wextra -Werror -I"$CUDA_HOME/include" -I"$NCCL_INC")
  local libs=(-L"$CUDA_HOME/lib64" -lnccl -lcudart -ldl)
  for p in native_semantics split_probe completion_timing online_latency stress_gpu; do
    mpicc "${cflags[@]}" "$ROOT/gpu_tests/src/$p.c" -o "$bin/$p" "${libs[@]}" || rc=1
  done
  mpicc "${cflags[@]}" "$ROOT/bench/gpu_allreduce_bench.c" -o "$bin/gpu_allreduce_bench" "${libs[@]}" || rc=1
  # the driver API directly (linked against the toolkit's stub; the driver's at run time)
  gcc "${cflags[@]}" "$ROOT/bench/gpu_driver_cost.c" -o "$bin/gpu_driver_cost" "${libs[@]}" \
    -L"$CUDA_HOME/lib64/stubs" -lcuda -lpthread || rc=1
  # no MPI (its init would start the recorder) and no cudart: the driver API at run time
  gcc "${cflags[@]}" -I"$ROOT/runtime/preload" "$ROOT/bench/gpu_hostcost_ab.c" -o "$bin/gpu_hostcost_ab" \
    -lnccl -ldl -lpthread || rc=1
  return $rc
}

# build_fixtures BINDIR: the fixtures named in gpu_tests/matrix.txt, with -g so the
# trace's call sites resolve to file:line (someone else's code: no -Werror).
build_fixtures() {
  local bin=$1/fixtures f base
  mkdir -p "$bin"
  [ -f "$ROOT/gpu_tests/matrix.txt" ] || return 0
  sed 's/#.*//' "$ROOT/gpu_tests/matrix.txt" | while read -r f; do
    [ -n "$f" ] && [ -f "$ROOT/$f" ] || continue
    base=$(basename "${f%.*}")
    # From the repo root with the relative path, and the root mapped away, so the
    # debug info names "fixtures/nccl/x.c" exactly as the committed lint JSON does.
    case $f in
      *.cu) (cd "$ROOT" && nvcc -g -O0 -ccbin mpicxx -Xcompiler -fdebug-prefix-map="$ROOT"=. \
               -I"$NCCL_INC" "$f" -o "$bin/$base" -lnccl) ;;
      *) (cd "$ROOT" && mpicc -std=gnu11 -g -O0 -fdebug-prefix-map="$ROOT"=. -I"$CUDA_HOME/include" \
            -I"$NCCL_INC" -Ifixtures "$f" -o "$bin/$base" -L"$CUDA_HOME/lib64" -lnccl -lcudart) ;;
    esac || echo "run_all: fixture $f did not build" >&2
  done
}

if [ "${1:-}" = "--compile-only" ]; then
  # The scripts first (no toolchain needed), then the C programs.
  for f in "$ROOT"/gpu_tests/*.sh; do bash -n "$f" || exit 1; done
  python3 -m py_compile "$ROOT"/gpu_tests/*.py || exit 1
  find_cuda || { echo "run_all: nvcc, mpicc or nccl.h missing: compile check skipped"; exit 77; }
  out=${2:-$(mktemp -d)}
  build_programs "$out" && build_fixtures "$out" && echo "run_all: gpu_tests programs compile ($out)"
  exit $?
fi

if [ $# -ne 2 ]; then
  echo "usage: $0 NRANKS OUTDIR | $0 --compile-only [DIR]" >&2
  exit 2
fi
NRANKS=$1
OUT=$(mkdir -p "$2" && cd "$2" && pwd)
WORK=${GT_WORK:-/tmp/gt-work}
BUDGET=${GT_BUDGET:-500}
rm -rf "$WORK" && mkdir -p "$WORK/logs"
find_cuda || { echo "run_all: need nvcc, mpicc and nccl.h" >&2; exit 2; }

# cJSON: the system's, or the carried .debs unpacked into WORK. Debian's CMake files
# name /usr absolutely, so they are pointed at the unpacked tree.
CMAKE_EXTRA=()
if [ ! -f /usr/include/cjson/cJSON.h ] || [ -n "${GT_FORCE_DEBS:-}" ]; then
  debs=("$ROOT"/.deps/libcjson*.deb)
  if [ ! -f "${debs[0]}" ]; then
    echo "run_all: no system cJSON and no .deps/libcjson*.deb carried" >&2
    exit 2
  fi
  CJ=$WORK/cjson
  for d in "${debs[@]}"; do dpkg -x "$d" "$CJ"; done
  sed -i "s#\"/usr#\"$CJ/usr#g" "$CJ"/usr/lib/x86_64-linux-gnu/cmake/cJSON/*.cmake
  CMAKE_EXTRA=(-DCMAKE_PREFIX_PATH="$CJ/usr" -DcJSON_DIR="$CJ/usr/lib/x86_64-linux-gnu/cmake/cJSON")
  export LD_LIBRARY_PATH=$CJ/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

"$ROOT/gpu_tests/probe.sh" "$NRANKS" >"$WORK/logs/probe.log" 2>&1
echo "== build lockstep ($(date -u +%T))"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
if ! { cmake -S "$ROOT" -B "$WORK/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DLOCKSTEP_ANALYZER=OFF -DLOCKSTEP_TESTS=OFF -DLOCKSTEP_WERROR=OFF "${CMAKE_EXTRA[@]}" \
       && cmake --build "$WORK/build" -j"$(nproc)"; } >"$WORK/logs/build-lockstep.log" 2>&1; then
  echo "run_all: lockstep build failed (log in logs.tar.gz):" >&2
  tail -20 "$WORK/logs/build-lockstep.log" >&2
fi
# GT_BASE_ROOT: another source tree (e.g. main's) built the same way, run beside this
# one in steps timing and bench as process label "base" (suite.py, GT_BASE_LS).
if [ -n "${GT_BASE_ROOT:-}" ]; then
  echo "== build baseline lockstep from $GT_BASE_ROOT ($(date -u +%T))"
  if { cmake -S "$GT_BASE_ROOT" -B "$WORK/build-base" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DLOCKSTEP_ANALYZER=OFF -DLOCKSTEP_TESTS=OFF -DLOCKSTEP_WERROR=OFF "${CMAKE_EXTRA[@]}" \
       && cmake --build "$WORK/build-base" -j"$(nproc)"; } >"$WORK/logs/build-base.log" 2>&1; then
    export GT_BASE_LS=$WORK/build-base/lockstep
  else
    echo "run_all: baseline build failed (log in logs.tar.gz)" >&2
  fi
fi
echo "== build programs ($(date -u +%T))"
build_programs "$WORK/bin" >"$WORK/logs/build-programs.log" 2>&1 || { cat "$WORK/logs/build-programs.log" >&2; }
build_fixtures "$WORK/bin" >"$WORK/logs/build-fixtures.log" 2>&1
LS=$WORK/build/lockstep
[ -x "$LS" ] || LS=$(ls "$WORK"/build/*/lockstep 2>/dev/null | head -1)
[ -x "${LS:-}" ] || LS=/bin/false

left=$((BUDGET - ($(date +%s) - START)))
echo "== suite: $NRANKS ranks, $left s left ($(date -u +%T))"
python3 "$ROOT/gpu_tests/suite.py" --nranks "$NRANKS" --out "$OUT" --work "$WORK" \
  --lockstep "$LS" --bin "$WORK/bin" --root "$ROOT" --budget "$left" \
  ${GT_STEPS:+--steps "$GT_STEPS"}
rc=$?
echo "run_all: done in $(($(date +%s) - START)) s, rc=$rc; results in $OUT"
exit $rc
