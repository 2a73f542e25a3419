#!/usr/bin/env bash
# make_lint_json.sh — the static half of the failure matrix, made on a CPU machine
# (the GPU node has no libclang): `lockstep lint --format=json` of every fixture in
# gpu_tests/matrix.txt into gpu_tests/lint/<name>.json, committed beside the suite.
# Run from anywhere after building lockstep with the analyzer:
#   gpu_tests/make_lint_json.sh [path/to/lockstep]      (default: build/lockstep)
# Paths are given relative to the repo root so the findings' "file" matches the
# debug info of the fixtures that run_all.sh builds (also from the root, relative).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LS=$(readlink -f "${1:-$ROOT/build/lockstep}")
[ -x "$LS" ] || { echo "make_lint_json: $LS: not an executable (build lockstep first)" >&2; exit 2; }
cuda_inc=/usr/local/cuda/include
mpi_flags=$(mpicc --showme:compile 2>/dev/null || echo "-I/usr/lib/x86_64-linux-gnu/openmpi/include")
mkdir -p "$ROOT/gpu_tests/lint"
cd "$ROOT"
rc=0
while read -r f; do
  [ -n "$f" ] || continue
  [ -f "$f" ] || { echo "make_lint_json: $f: no such fixture" >&2; rc=2; continue; }
  out=gpu_tests/lint/$(basename "${f%.*}").json
  # lint exits 1 when it has findings: that is the expected outcome for most fixtures.
  set +e
  "$LS" lint --format=json "$f" -- $mpi_flags -I"$cuda_inc" -Ifixtures >"$out"
  lrc=$?
  set -e
  if [ $lrc -gt 1 ]; then
    echo "make_lint_json: lint failed on $f (exit $lrc)" >&2
    rc=2
  fi
  n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$out" 2>/dev/null || echo "?")
  echo "$out: $n finding(s)"
done < <(sed 's/#.*//' gpu_tests/matrix.txt)
exit $rc
