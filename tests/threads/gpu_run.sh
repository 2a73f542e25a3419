#!/usr/bin/env bash
# tests/threads/gpu_run.sh OUTDIR — the group-across-threads and completion fixtures on two GPUs
# under `lockstep run`: builds the recorder and tools (no analyzer), each fixture (with its
# // BUILD: flags), runs it with 2 ranks, and writes per fixture its RUNTIME line, the
# program's output and compare's first divergence into OUTDIR/summary.txt (and build.log).
# Last runs: tests/threads/gpu_results.txt (07:00) and gpu_tests/results/2026-11-30-h200x2-s2/threads/ (with confirm).
# Device call (from the repo root): run(kind="nvidia-h200-x2", carry=[".deps"],
#   command="tests/threads/gpu_run.sh $OUT")
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:?usage: gpu_run.sh OUTDIR}
WORK=${THR_WORK:-/tmp/thr-work}
mkdir -p "$OUT" && rm -rf "$WORK" && mkdir -p "$WORK/bin" || exit 2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc) || exit 2
CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
NCCL_INC=$CUDA_HOME/include
[ -f /usr/include/nccl.h ] && NCCL_INC=/usr/include
CMAKE_EXTRA=()
if [ ! -f /usr/include/cjson/cJSON.h ]; then
  CJ=$WORK/cjson
  for d in "$ROOT"/.deps/libcjson*.deb; do dpkg -x "$d" "$CJ"; done
  sed -i "s#\"/usr#\"$CJ/usr#g" "$CJ"/usr/lib/x86_64-linux-gnu/cmake/cJSON/*.cmake
  CMAKE_EXTRA=(-DCMAKE_PREFIX_PATH="$CJ/usr" -DcJSON_DIR="$CJ/usr/lib/x86_64-linux-gnu/cmake/cJSON")
  export LD_LIBRARY_PATH=$CJ/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
{ cmake -S "$ROOT" -B "$WORK/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKSTEP_ANALYZER=OFF \
    -DLOCKSTEP_TESTS=OFF -DLOCKSTEP_WERROR=OFF "${CMAKE_EXTRA[@]}" &&
  cmake --build "$WORK/build" -j"$(nproc)"; } >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 2; }
LS=$WORK/build/lockstep
sum=$OUT/summary.txt
: >"$sum"
for f in fixtures/nccl/group_across_pthread.c fixtures/nccl/group_across_std_thread.cu fixtures/nccl/group_across_omp.c \
         fixtures/clean/group_per_thread_pthread.c fixtures/clean/group_per_thread_std_thread.cu \
         fixtures/clean/group_in_omp_single.c fixtures/nccl/completion_assumed.c \
         fixtures/nccl/completion_assumed_managed.c fixtures/clean/completion_synced.c; do
  base=$(basename "${f%.*}")
  read -r -a build <<<"$(sed -n 's|^// BUILD: ||p' "$ROOT/$f" | head -n 1)"
  case $f in
    *.cu) xb=(); for b in "${build[@]}"; do xb+=(-Xcompiler "$b"); done
          (cd "$ROOT" && nvcc -g -O0 -std=c++17 -ccbin mpicxx -Xcompiler -fdebug-prefix-map="$ROOT"=. "${xb[@]}" -I"$NCCL_INC" "$f" -o "$WORK/bin/$base" -lnccl) ;;
    *) (cd "$ROOT" && mpicc -std=gnu11 -g -O0 -fdebug-prefix-map="$ROOT"=. "${build[@]}" -I"$CUDA_HOME/include" -I"$NCCL_INC" "$f" \
          -o "$WORK/bin/$base" -L"$CUDA_HOME/lib64" -lnccl -lcudart) ;;
  esac >"$WORK/$base.build.log" 2>&1 || { echo "== $f: BUILD FAILED" >>"$sum"; cat "$WORK/$base.build.log" >>"$sum"; continue; }
  tr=$WORK/traces/$base
  FIXTURE_TIMEOUT_S=10 timeout 60 "$LS" run --trace-dir "$tr" --timeout 5 --policy report -- \
    mpirun -np 2 --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0 -x FIXTURE_TIMEOUT_S \
    -x OMP_NUM_THREADS=2 "$WORK/bin/$base" >"$WORK/$base.out" 2>&1
  rc=$?
  {
    echo "== $f (rc=$rc)"
    grep '^// RUNTIME' "$ROOT/$f"
    grep -v '^\[' "$WORK/$base.out" | grep -v '^$' | head -20
    "$LS" compare --format=json "$tr" 2>&1 | python3 -c 'import json,sys
d=json.load(sys.stdin); dv=d.get("divergences") or []
print("compare:", d.get("status"), json.dumps(dv[0]) if dv else "")' 2>&1
    # lint's findings (made on a CPU machine: tests/threads/lint/) against this run
    lj=$ROOT/tests/threads/lint/$base.json
    [ -f "$lj" ] && { echo "confirm:"; "$LS" confirm --findings "$lj" --traces "$tr" 2>&1 | head -5; }
  } >>"$sum"
done
cat "$sum"
