#!/usr/bin/env bash
# corpus.sh — the development corpus for lint's precision: NCCL code nobody here wrote.
# For each set it writes a compile_commands.json (the flags that make the TUs parse, as
# the project's own Makefile would pass them) and runs one `lockstep lint -p` over it under
# a timeout, keeping its json/stderr/exit/time; then the Debian set of bench/realcode.sh. Not a test (minutes of lint, sources fetched by hand); its summary
# and every finding go to bench/RESULTS.md / bench/corpus_review.tsv after a hand review.
#
# Sources (never committed here): upstream trees checked out under $CORPUS_DIR as
#   nccl-tests   github.com/NVIDIA/nccl-tests        at a0b82b2260cf5152b9f8c061bbf7eaf0ba096432
#   nccl         github.com/NVIDIA/nccl              at 5067397c2676d5aed50042fc39e5c8ee96eb0027
#   torchcomms   github.com/meta-pytorch/torchcomms  at 59426ba4bfee75800b2909274d200401c4d5d2df
#                (only comms/torchcomms/ is needed)
# e.g. `git clone URL $CORPUS_DIR/NAME && git -C $CORPUS_DIR/NAME checkout COMMIT`.
# torchcomms includes PyTorch's C++ headers: TORCH_INCLUDE (default $OUT/torch/torch/include,
# the torch/include/ folder of PyPI's `torch` wheel, e.g. `pip download torch --no-deps` and
# unzip that folder; 2.15.0 here) is used when it exists; without it those TUs parse with
# errors, which the summary counts.
#
# Usage: bench/corpus.sh [SET...]  (default: nccl-tests nccl-examples nccl-src torchcomms debian)
# Env: CORPUS_DIR (default /work/corpus), OUT (default /tmp/corpus-out), LOCKSTEP
#      (default build/lockstep), SET_TIMEOUT (seconds per set, default 1800), JOBS (default 2), CUDA
#      (default /usr/local/cuda); the debian set passes REALCODE_DIR=$OUT/debian on.
set -uo pipefail
case ${1:-} in -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
C=${CORPUS_DIR:-/work/corpus}
OUT=${OUT:-/tmp/corpus-out}
LOCKSTEP=${LOCKSTEP:-$root/build/lockstep}
SET_TIMEOUT=${SET_TIMEOUT:-1800}
JOBS=${JOBS:-2}
CUDA=${CUDA:-/usr/local/cuda}
SETS=${*:-nccl-tests nccl-examples nccl-src torchcomms debian}

die() { echo "corpus.sh: $*" >&2; exit 2; }
[ -x "$LOCKSTEP" ] || die "$LOCKSTEP: not built (cmake -S . -B build -DLOCKSTEP_ANALYZER=ON && cmake --build build)"
LOCKSTEP=$(readlink -f "$LOCKSTEP")
mkdir -p "$OUT" || die "$OUT: cannot create"
OUT=$(readlink -f "$OUT")
need() { [ -d "$C/$1" ] || die "$C/$1: missing (check out $2 there; see the header of $0)"; }
MPI_INC=$(mpicc --showme:incdirs 2>/dev/null | tr ' ' '\n' | sed '/^$/d;s/^/-I/' | tr '\n' ' ')
[ -n "$MPI_INC" ] || MPI_INC="-I/usr/lib/x86_64-linux-gnu/openmpi/include"
# Lint that exits 2 on a TU with compile errors (unless told otherwise) would analyze
# nothing of these partly parsing TUs; older lint has no such option and goes on anyway.
ALLOW=
"$LOCKSTEP" lint --help 2>&1 | grep -q -- '--allow-errors' && ALLOW=--allow-errors

# cdb SET DIR COMPILER FLAGS FILE... : one entry per FILE, run from DIR.
cdb() {
  local set=$1 dir=$2 cc=$3 flags=$4; shift 4
  mkdir -p "$OUT/$set"
  python3 - "$OUT/$set/compile_commands.json" "$dir" "$cc" "$flags" "$@" <<'EOF'
import json, shlex, sys
out, d, cc, flags, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
json.dump([{"directory": d, "file": f, "arguments": [cc] + shlex.split(flags) + ["-c", f, "-o", "/dev/null"]}
           for f in files], open(out, "w"), indent=1)
EOF
  printf '%s\n' "$@" | nl -w1 -s$'\t' > "$OUT/$set/tus"
}

# One lint process per set over its whole database, as a user runs `lint -p build`:
# summaries of helpers cross the TUs of the set (nccl-tests' common.cu calls util.cu's).
lint_set() { # lint_set SET (after cdb)
  local S=$1 t0 t1 rc
  echo "== $S: $(wc -l < "$OUT/$S/tus") TUs" >&2
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  timeout -k 10 "$SET_TIMEOUT" "$LOCKSTEP" lint -q $ALLOW -j "$JOBS" --format=json -p "$OUT/$S" > "$OUT/$S/lint.json" 2> "$OUT/$S/lint.err"
  rc=$?
  t1=$(date +%s.%N)
  printf '%s\t%s\t%s\n' "$OUT/$S/compile_commands.json" "$rc" "$(echo "$t1 - $t0" | bc)" > "$OUT/$S/lint.rc"
}

# The public headers as src/Makefile installs them (nccl.h from nccl.h.in: version numbers
# only; nccl_device.h and nccl_device/), in $OUT/nccl-include: the users' sets build against
# the checked-out NCCL rather than whatever NCCL is installed.
nccl_headers() {
  need nccl github.com/NVIDIA/nccl
  local s=$C/nccl/src g=$OUT/nccl-include v
  mkdir -p "$g"
  v=$(sed -n 's/^NCCL_\(MAJOR\|MINOR\|PATCH\) *:= *//p' "$C/nccl/makefiles/version.mk" | tr '\n' ' ')
  # shellcheck disable=SC2086
  set -- $v
  [ $# = 3 ] || die "$C/nccl/makefiles/version.mk: no NCCL_MAJOR/MINOR/PATCH"
  sed -e "s/\${nccl:Major}/$1/g" -e "s/\${nccl:Minor}/$2/g" -e "s/\${nccl:Patch}/$3/g" \
      -e 's/\${nccl:Suffix}//g' -e "s/\${nccl:Version}/$(( $1 * 10000 + $2 * 100 + $3 ))/g" \
      "$s/nccl.h.in" > "$g/nccl.h"
  cp "$s/include/nccl_device.h" "$g/"
  rm -rf "$g/nccl_device" && cp -r "$s/include/nccl_device" "$g/"
}

set_nccl-tests() {
  need nccl-tests github.com/NVIDIA/nccl-tests
  local s=$C/nccl-tests/src
  # The Makefile's MPI=1 build: -DMPI_SUPPORT turns on the multi-process paths. Built
  # against the installed NCCL (NCCL_HOME), as its Makefile does.
  cdb nccl-tests "$s" nvcc "-std=c++17 -DNCCL_OS_LINUX -DMPI_SUPPORT -I$CUDA/include -I$s/../os -I$s/../verifiable $MPI_INC" \
    $(cd "$s" && ls *.cu *.cc | sort | sed "s|^|$s/|")
  lint_set nccl-tests
}

# .cu entries go through nvcc (whose flags lint translates, adding its CUDA flags).
nvcc_for_cu() { # nvcc_for_cu SET
  python3 - "$OUT/$1/compile_commands.json" <<'EOF2'
import json, sys
db = json.load(open(sys.argv[1]))
for e in db:
    if e["file"].endswith(".cu"):
        e["arguments"] = ["nvcc"] + [a if a != "-std=c++20" else "-std=c++17" for a in e["arguments"][1:]]
json.dump(db, open(sys.argv[1], "w"), indent=1)
EOF2
}

set_nccl-examples() {
  local s=$C/nccl/docs/examples
  nccl_headers
  # `make MPI=1` (makefiles/examples.mk): mpicxx with -DMPI_SUPPORT, one process per rank;
  # without it the examples run their ranks as pthreads of one process.
  cdb nccl-examples "$s" mpicxx "-std=c++17 -DMPI_SUPPORT -I$s/common/include -I$s/07_kernel_fusion/include -I$OUT/nccl-include -I$CUDA/include $MPI_INC" \
    $(cd "$s" && find . \( -name '*.cc' -o -name '*.cu' \) | sed 's|^\./||' | sort | sed "s|^|$s/|")
  nvcc_for_cu nccl-examples
  lint_set nccl-examples
}

set_nccl-src() {
  need nccl github.com/NVIDIA/nccl
  local s=$C/nccl/src g=$OUT/nccl-include gen=$OUT/nccl-src/gen cv
  nccl_headers
  mkdir -p "$gen"
  python3 "$s/misc/generate_git_version.py" "$gen/nccl_git_version.h" || die "nccl: generate_git_version.py failed"
  cv=$("$CUDA/bin/nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/-DCUDA_MAJOR=\1 -DCUDA_MINOR=\2/p')
  # src/Makefile and makefiles/common.mk on Linux: -I. -I$(INCDIR) -I$(OBJDIR)/include
  # -Iinclude -I$(INCPLUGIN) -I$(CUDA_INC) -I$(CUDA_INC)/cccl and the bundled DOCA headers;
  # every .cc of the library except the Windows os/ files.
  cdb nccl-src "$s" g++ "-std=c++17 $cv -DNCCL_OS_LINUX -I$s -I$g -I$gen -I$s/include -I$s/include/plugin -I$CUDA/include -I$CUDA/include/cccl -I$s/transport/net_ib/gdaki/doca-gpunetio/include" \
    $(cd "$s" && find . -name '*.cc' ! -name 'windows*' | sed 's|^\./||' | sort | sed "s|^|$s/|")
  lint_set nccl-src
}

set_torchcomms() {
  need torchcomms github.com/meta-pytorch/torchcomms
  nccl_headers
  local s=$C/torchcomms ti=${TORCH_INCLUDE:-$OUT/torch/torch/include} inc=
  [ -d "$ti" ] && inc="-I$ti -I$ti/torch/csrc/api/include"
  # Every C++/CUDA TU of comms/torchcomms but its tests/ and benchmarks/ (they call the
  # torchcomms API, not NCCL; 125 of the 217 TUs, too slow to parse here); the rccl, xccl
  # and gloo headers are not installed, those TUs parse with errors.
  cdb torchcomms "$s" g++ "-std=c++20 -DUSE_C10D_NCCL -I$s -I$OUT/nccl-include -I$CUDA/include $inc $MPI_INC" \
    $(cd "$s" && find comms/torchcomms \( -name '*.cpp' -o -name '*.cc' -o -name '*.cu' \) ! -path '*/tests/*' ! -path '*/benchmarks/*' | sort | sed "s|^|$s/|")
  nvcc_for_cu torchcomms
  lint_set torchcomms
}

set_debian() {
  # realcode.sh: one lint process per TU, each under its own 120 s timeout.
  REALCODE_DIR=$OUT/debian LOCKSTEP=$LOCKSTEP JOBS=$JOBS CUDA=$CUDA \
    bash "$root/bench/realcode.sh" || die "bench/realcode.sh failed"
}

for s in $SETS; do
  declare -F "set_$s" >/dev/null || die "$s: unknown set (known: nccl-tests nccl-examples nccl-src torchcomms debian)"
  "set_$s"
done
python3 "$root/bench/corpus_summary.py" "$OUT" $SETS
