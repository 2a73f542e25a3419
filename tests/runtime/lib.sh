# lib.sh — shared helpers of the recorder's shell tests (sourced). ctest provides
# LS_LIB, LS_PROG, LS_DUMP, LS_BIN, LS_FAKECUDA, LS_TMPROOT (tests/runtime.cmake).
set -u
NAME=$(basename "$0" .sh)
T="$LS_TMPROOT/$NAME"
rm -rf "$T"
mkdir -p "$T"
unset LD_PRELOAD LOCKSTEP_DISABLE LOCKSTEP_DEVICE LOCKSTEP_TIMEOUT LOCKSTEP_POLICY LOCKSTEP_TRACE_CAPACITY \
      LS_FAKE_CUDA_NEVER LS_FAKE_CUDA_DELAY_MS LS_FAKE_CUDA_COMPLETE_FIRST LS_FAKE_CUDA_LOG \
      RANK WORLD_SIZE OMPI_COMM_WORLD_RANK 2>/dev/null || true
export LOCKSTEP_TRACE_DIR="$T/traces"
# A passing test leaves nothing behind: traces are preallocated, and a whole CI run's tests
# left ~6 GB (a full disk truncates what the tools write). A failing or skipped test keeps
# $T to look at. Tests that set an EXIT trap of their own keep $T too.
trap 'st=$?; [ "$st" -ne 0 ] || rm -rf "$T"' EXIT

fail() {
  echo "FAIL ($NAME): $*" >&2
  exit 1
}

# the single trace file in $LOCKSTEP_TRACE_DIR (or $1)
one_trace() {
  d=${1:-$LOCKSTEP_TRACE_DIR}
  n=$(ls "$d"/*.lstrace 2>/dev/null | wc -l)
  [ "$n" -eq 1 ] || fail "expected one trace in $d, found $n"
  ls "$d"/*.lstrace
}

# value of key=... on a dump line read from stdin
kv() { sed -n "s/.* $1=\\([^ ]*\\).*/\\1/p"; }

# The commands that write a whole document, each with its exit status on a trace directory
# of two diverging ranks: `each_document_command FN` calls `FN STATUS ARGS...` for each
# (t_oom_realloc.sh, t_write_error.sh: one list, so a new command is checked by both).
each_document_command() {
  "$1" 1 compare --format=json "$LOCKSTEP_TRACE_DIR"
  "$1" 1 compare "$LOCKSTEP_TRACE_DIR"
  "$1" 0 trace export --format=json "$LOCKSTEP_TRACE_DIR"
  "$1" 0 trace export --format=perfetto "$LOCKSTEP_TRACE_DIR"
  if [ -n "${LS_LINT_FIXTURE:-}" ]; then
    "$1" 1 lint --format=json "$LS_LINT_FIXTURE"
    "$1" 1 lint "$LS_LINT_FIXTURE"
  fi
}
