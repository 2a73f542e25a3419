#!/bin/sh
# tests/static/static_checks.sh — clang-tidy (.clang-tidy) and cppcheck
# (tests/static/cppcheck.cfg flags + cppcheck.supp) over analyzer/ and runtime/, with the
# build's compile_commands.json for clang-tidy. Any finding fails; exit 77 = tool missing.
# usage: static_checks.sh tidy|cppcheck SRCDIR BUILDDIR
set -eu
what=$1
SRC=$(cd "$2" && pwd)
BUILD=$(cd "$3" && pwd)
files=$(cd "$SRC" && ls cli/*.c common/*.c rules/*.c analyzer/*.c analyzer/checks/*.c runtime/*.c runtime/*/*.c runtime/*/*/*.c)
case $what in
  tidy)
    TIDY=${LS_CLANG_TIDY:-clang-tidy-19}
    command -v "$TIDY" > /dev/null 2>&1 || { echo "$TIDY not found: skipped (.ci/setup installs clang-tidy-19)"; exit 77; }
    [ -f "$BUILD/compile_commands.json" ] || { echo "no $BUILD/compile_commands.json"; exit 1; }
    # Only files this build compiles (MPI or the analyzer may be off); two at a time;
    # gcc-only warning flags in the database are not clang-tidy's business.
    cd "$SRC"
    files=$(for f in $files; do grep -qF "\"$SRC/$f\"" "$BUILD/compile_commands.json" && echo "$f"; done)
    echo "$files" | xargs -P 2 -n 4 "$TIDY" -p "$BUILD" --quiet --extra-arg=-Wno-unknown-warning-option \
      > "$BUILD/clang-tidy.log" 2>&1 || true
    if grep -E '(warning|error): .*\[[a-zA-Z0-9.,-]+\]$' "$BUILD/clang-tidy.log"; then
      echo "clang-tidy: findings above (config: .clang-tidy)"
      exit 1
    fi
    if grep -E '^(Error|error:)' "$BUILD/clang-tidy.log"; then
      echo "clang-tidy: could not check some files (log: $BUILD/clang-tidy.log)"
      exit 1
    fi
    echo "clang-tidy: $(echo "$files" | wc -w) files clean"
    ;;
  cppcheck)
    command -v cppcheck > /dev/null 2>&1 || { echo "cppcheck not found: skipped (.ci/setup installs it)"; exit 77; }
    cd "$SRC"
    # shellcheck disable=SC2046
    cppcheck $(grep -v '^#' tests/static/cppcheck.cfg) --suppressions-list=tests/static/cppcheck.supp \
      --error-exitcode=1 -q -j2 $files
    echo "cppcheck: $(echo "$files" | wc -w) files clean"
    ;;
  *) echo "usage: $0 tidy|cppcheck SRCDIR BUILDDIR" >&2; exit 2 ;;
esac
