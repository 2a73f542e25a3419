#!/usr/bin/env bash
# realcode.sh — run `lockstep lint` over real code nobody here wrote: Debian source
# packages (pytorch c10d, xgboost collectives, mpich's collective tests, hdf5 parallel
# I/O, lammps) fetched with apt-get source, one lint process per TU under a timeout so
# a hang or crash is counted, not fatal. Not a test (too slow for CI); it prints a
# summary for bench/RESULTS.md (## real code) and keeps every TU's output for review.
# Usage: bench/realcode.sh [PACKAGE...]   (default: pytorch xgboost mpich hdf5 lammps)
# Env: REALCODE_DIR (work dir, default /tmp/realcode), LOCKSTEP (default build/lockstep),
#      TU_TIMEOUT (seconds per TU, default 120), JOBS (parallel TUs, default 2),
#      CUDA (default /usr/local/cuda), MAX_TUS (cap per package, default 0 = all),
#      TUS (an extended regex: lint only the TUs whose path matches it, to re-run the
#      ones that had findings without the slow rest of a package).
set -uo pipefail
case ${1:-} in -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
W=${REALCODE_DIR:-/tmp/realcode}
LOCKSTEP=${LOCKSTEP:-$root/build/lockstep}
TU_TIMEOUT=${TU_TIMEOUT:-120}
JOBS=${JOBS:-2}
CUDA=${CUDA:-/usr/local/cuda}
MAX_TUS=${MAX_TUS:-0}
TUS=${TUS:-}
PKGS=${*:-pytorch xgboost mpich hdf5 lammps}

die() { echo "realcode.sh: $*" >&2; exit 2; }
[ -x "$LOCKSTEP" ] || die "$LOCKSTEP: not built (cmake -S . -B build -DLOCKSTEP_ANALYZER=ON && cmake --build build)"
LOCKSTEP=$(readlink -f "$LOCKSTEP")
mkdir -p "$W/dl" "$W/src" "$W/out" || die "$W: cannot create the work dir"
# Open MPI's headers stand in for every package's MPI (mpich's own mpi.h needs configure).
MPI_INC=$(mpicc --showme:incdirs 2>/dev/null | tr ' ' '\n' | sed 's/^/-I/' | tr '\n' ' ')
[ -n "$MPI_INC" ] || MPI_INC="-I/usr/lib/x86_64-linux-gnu/openmpi/include"

# deb-src lines for the same suites as the machine's deb lines (deb822 .sources and
# one-line .list files alike); only Debian's own archives publish sources.
ensure_deb_src() {
  apt-cache showsrc mpich 2>/dev/null | grep -q '^Package:' && return 0
  local out=/etc/apt/sources.list.d/lockstep-realcode-src.sources
  local f
  : > "$out.tmp"
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && [ "$f" != "$out" ] || continue
    grep -q 'debian.org' "$f" || continue
    awk 'BEGIN{RS="";ORS="\n\n"} /Types:[^\n]*deb/ && /debian\.org/ {sub(/Types:[^\n]*/,"Types: deb-src"); print}' "$f" >> "$out.tmp"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    grep -E '^deb[[:space:]].*debian\.org' "$f" | sed 's/^deb /deb-src /' |
      awk '{t="Types: deb-src\nURIs: " $2 "\nSuites: " $3 "\nComponents:"; for(i=4;i<=NF;i++) t=t " " $i; print t "\n"}' >> "$out.tmp"
  done
  [ -s "$out.tmp" ] || die "no Debian deb lines in /etc/apt to derive deb-src lines from"
  mv "$out.tmp" "$out"
  apt-get update -qq || die "apt-get update failed after adding $out"
}

# Fetch a source package's orig tarball (the Debian patches are not needed to lint
# upstream code) and extract only the wildcards given.
fetch() { # fetch SRCPKG DESTNAME WILDCARD...
  local pkg=$1 dest=$2; shift 2
  [ -d "$W/src/$dest" ] && return 0
  ( cd "$W/dl" && ls ${pkg}_*.orig.tar.* >/dev/null 2>&1 || apt-get source --download-only -qq "$pkg" ) >/dev/null 2>&1
  local tarball
  tarball=$(ls "$W/dl/${pkg}"_*.orig.tar.* 2>/dev/null | head -1)
  [ -n "$tarball" ] || die "$pkg: apt-get source --download-only fetched no orig tarball"
  mkdir -p "$W/src/$dest.tmp"
  tar -xf "$tarball" -C "$W/src/$dest.tmp" --strip-components=1 --wildcards "$@" ||
    die "$tarball: extraction failed"
  mv "$W/src/$dest.tmp" "$W/src/$dest"
}

# Generated config headers: each X.h.in (autoconf #undef, cmake #cmakedefine/@VAR@)
# becomes X.h with everything off, so a TU gets past the include and the code is seen.
stub_configs() { # stub_configs DIR...
  local f
  find "$@" -name '*.h.in' 2>/dev/null | while read -r f; do
    [ -e "${f%.in}" ] && continue
    sed -E -e 's/^#cmakedefine01 ([A-Za-z0-9_]+).*/#define \1 0/' \
           -e 's/^#cmakedefine ([A-Za-z0-9_]+).*/\/* #undef \1 *\//' \
           -e 's/^#undef ([A-Za-z0-9_]+).*/\/* #undef \1 *\//' \
           -e 's/@[A-Za-z0-9_]+@/0/g' "$f" > "${f%.in}"
  done
}

# One TU: lint with a timeout, keep json + stderr + exit status + wall time.
# Called through xargs, one line "N<TAB>FILE" per TU; flags come from $W/out/$P/flags.
run_tu() {
  local line=$1 n file t0 t1 rc
  n=${line%%$'\t'*}; file=${line#*$'\t'}
  local o="$W/out/$P/$n"
  t0=$(date +%s.%N)
  # --allow-errors: these TUs knowingly do not all compile here (stubbed config headers, Open
  # MPI's mpi.h for every package); the summary counts TUs with errors from the JSON's "ok".
  # shellcheck disable=SC2046,SC2086
  timeout -k 10 "$TU_TIMEOUT" "$LOCKSTEP" lint $ALLOW --format=json "$file" -- $(cat "$W/out/$P/flags") > "$o.json" 2> "$o.err"
  rc=$?
  t1=$(date +%s.%N)
  printf '%s\t%s\t%s\n' "$file" "$rc" "$(echo "$t1 - $t0" | bc)" > "$o.rc"
}
export -f run_tu
# Lint that exits 2 on compile errors unless told otherwise would analyze nothing of the
# partly parsing TUs here; older lint has no such option and goes on anyway.
ALLOW=
"$LOCKSTEP" lint --help 2>&1 | grep -q -- '--allow-errors' && ALLOW=--allow-errors
export LOCKSTEP TU_TIMEOUT W ALLOW

lint_pkg() { # lint_pkg NAME FILELIST FLAGS
  P=$1; export P
  rm -rf "$W/out/$P"; mkdir -p "$W/out/$P"
  printf '%s\n' "$3" > "$W/out/$P/flags"
  local list=$2
  [ -n "$TUS" ] && list=$(printf '%s\n' "$list" | grep -E -- "$TUS")
  [ "$MAX_TUS" -gt 0 ] && list=$(printf '%s\n' "$list" | head -n "$MAX_TUS")
  printf '%s\n' "$list" | grep -v '^$' | nl -w1 -s$'\t' > "$W/out/$P/tus"
  echo "== $P: $(wc -l < "$W/out/$P/tus") TUs" >&2
  local t0=$(date +%s)
  tr '\n' '\0' < "$W/out/$P/tus" | xargs -0 -P "$JOBS" -I{} bash -c 'run_tu "$1"' _ {}
  echo $(( $(date +%s) - t0 )) > "$W/out/$P/wall"
}

CXXBASE="-x c++ -std=c++17 -w"
cuda_inc="-I$CUDA/include"

pkg_pytorch() {
  fetch pytorch pytorch '*/torch/csrc/*' '*/c10/*' '*/aten/src/*' '*/torch/*.h'
  local s=$W/src/pytorch
  stub_configs "$s/c10" "$s/aten/src/ATen" "$s/torch/csrc/api/include"
  lint_pkg pytorch "$(ls "$s"/torch/csrc/distributed/c10d/*.cpp)" \
    "$CXXBASE -DUSE_C10D_NCCL -DUSE_C10D_MPI -DUSE_CUDA -DUSE_NCCL -DUSE_DISTRIBUTED -I$s -I$s/aten/src -I$s/torch/csrc/api/include $cuda_inc $MPI_INC"
}

pkg_xgboost() {
  fetch xgboost xgboost '*'
  # dmlc-core is a git submodule, empty in the orig tarball; Debian ships it as its own source.
  fetch dmlc-core dmlc-core '*/include/*'
  local s=$W/src/xgboost
  # The collective layer and every TU that calls into it (rabit::, collective::, NCCL, MPI).
  lint_pkg xgboost "$(cd "$s" && grep -rlE 'collective::|rabit::|nccl|MPI_' src rabit/src --include=*.cc --include=*.cu | sort | sed "s|^|$s/|")" \
    "-std=c++17 -w -DXGBOOST_USE_NCCL=1 -DXGBOOST_USE_CUDA=1 -DDMLC_USE_CXX11=1 -I$s/include -I$W/src/dmlc-core/include -I$s/rabit/include -I$s/gputreeshap $cuda_inc $MPI_INC"
}

pkg_mpich() {
  fetch mpich mpich '*/test/mpi/*'
  local s=$W/src/mpich/test/mpi
  stub_configs "$s/include"
  lint_pkg mpich "$(ls "$s"/coll/*.c)" "-x c -std=gnu11 -w -DTHREAD_PACKAGE_NAME=THREAD_PACKAGE_POSIX -DHAVE_STDLIB_H=1 -DHAVE_STRING_H=1 -DHAVE_UNISTD_H=1 -I$s/include -I$s/dtpools/include $MPI_INC"
}

pkg_hdf5() {
  fetch hdf5 hdf5 '*'
  local s=$W/src/hdf5
  # Its configure writes src/H5pubconf.h (H5_HAVE_PARALLEL...) in a minute or two. Its CMake
  # would give a compile_commands.json (if run from the build dir: a try_run writes into the
  # cwd), but lint -p cannot use it: GCC-only flags (-fstdarg-opt) and mpicc's implicit -I.
  if [ ! -f "$s/src/H5pubconf.h" ]; then
    ( cd "$s" && CC=mpicc ./configure --enable-parallel --disable-fortran --disable-cxx \
        --disable-hl --disable-tools --without-zlib --without-szlib ) > "$W/hdf5-configure.log" 2>&1 ||
      die "hdf5: configure failed (see $W/hdf5-configure.log)"
  fi
  # Parallel code: the library sources that call MPI collectives or MPI-IO, and testpar/.
  lint_pkg hdf5 "$(cd "$s" && { grep -lE 'MPI_(Allreduce|Bcast|Barrier|Allgather|Gather|Reduce|Scatter|Alltoall|File_)' src/*.c; ls testpar/*.c; } | sort -u | sed "s|^|$s/|")" \
    "-x c -std=gnu11 -w -D_GNU_SOURCE -I$s/src -I$s/test -I$s/testpar $MPI_INC"
}

pkg_lammps() {
  fetch lammps lammps '*/src/*'
  local s=$W/src/lammps
  # style_*.h and lmp*.h are generated by the build from installed packages: none here.
  local st=$W/stubs/lammps; mkdir -p "$st"
  for h in $(cd "$s/src" && grep -ohE '#include "(style_[a-z_]+|lmpinstalledpkgs|lmpgitversion)\.h"' *.cpp *.h | sort -u | sed -E 's/.*"(.*)"/\1/'); do
    [ -f "$st/$h" ] || : > "$st/$h"
  done
  printf '#define LAMMPS_INSTALLED_PACKAGES ""\n' > "$st/lmpinstalledpkgs.h"
  printf '#define LAMMPS_GIT_REVISION ""\n#define LAMMPS_GIT_COMMIT ""\n#define LAMMPS_GIT_BRANCH ""\n#define LAMMPS_GIT_DESCRIPTOR ""\n' > "$st/lmpgitversion.h"
  # The core (src/*.cpp) TUs that issue MPI collectives.
  lint_pkg lammps "$(grep -lE 'MPI_(Allreduce|Bcast|Barrier|Allgather|Reduce|Gather|Scatter|Alltoall)' "$s"/src/*.cpp | sort)" \
    "$CXXBASE -DLAMMPS_SMALLBIG -I$s/src -I$st $MPI_INC"
}

ensure_deb_src
for p in $PKGS; do
  declare -F "pkg_$p" >/dev/null || die "$p: unknown package (known: pytorch xgboost mpich hdf5 lammps)"
  "pkg_$p"
done
python3 "$root/bench/realcode_summary.py" "$W/out" $PKGS
