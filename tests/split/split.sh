# split.sh — compare's `not-ready` for a call on the child of a split of a non-blocking parent
# made before the parent was polled (the child is still NULL, as in NCCL 2.28.3), and silence
# once the parent was polled. split_prog under `lockstep run`, two ranks per mode, on the
# stand-in NCCL (whose split behaves as NCCL 2.28.3's by default). ctest provides LS_BIN, LS_PROG, LS_SRC,
# LS_FAKECUDA, LS_WORK.
set -u
fail() {
  echo "FAIL (split): $*" >&2
  exit 1
}
rm -rf "$LS_WORK"
mkdir -p "$LS_WORK"
cd "$LS_WORK" || fail cd
unset LS_STANDIN_ASYNC_END LS_STANDIN_POLLS LOCKSTEP_RECORD_QUERIES LS_STANDIN_SPLIT_IN_PROGRESS 2>/dev/null || true
USE=$(grep -n "SP:use" "$LS_SRC" | cut -d: -f1)
QUERY=$(grep -n "SP:query" "$LS_SRC" | cut -d: -f1)
[ -n "$USE" ] && [ -n "$QUERY" ] || fail "marker not found in $LS_SRC"

run_pair() { # MODE
  LD_LIBRARY_PATH="$LS_FAKECUDA" "$LS_BIN" run --trace-dir "$1" -- \
    sh -c "LS_TEST_UID=$1 RANK=0 '$LS_PROG' $1 & LS_TEST_UID=$1 RANK=1 '$LS_PROG' $1; wait" ||
    fail "$1: the program failed"
  [ "$(ls "$1"/*.lstrace | wc -l)" -eq 2 ] || fail "$1: expected two traces"
  "$LS_BIN" compare "$1" > "$1.txt"
  echo $? > "$1.rc"
  "$LS_BIN" compare --format=json "$1" > "$1.json" 2> /dev/null
}
# The child used before the parent was polled: not-ready on both ranks at the call, reported
# on the parent at seq 1 (its AllReduce was seq 0), not the api-error NCCL answered with.
not_ready() { # MODE LINE
  [ "$(cat "$1.rc")" -eq 1 ] || fail "$1: compare should exit 1: $(cat "$1.txt")"
  head -1 "$1.txt" | grep -Eq "^divergence: not-ready on comm 0x[0-9a-f]+ at seq 1: rank 0 .* at .*split_prog\.c:$2 vs rank 1 .* at .*split_prog\.c:$2\$" ||
    fail "$1: first line: $(head -1 "$1.txt")"
  grep -q "NCCL hands the child out only after the parent's state leaves ncclInProgress" "$1.txt" ||
    fail "$1: the detail does not say why: $(cat "$1.txt")"
  grep -q "reported on the parent at seq 1" "$1.txt" || fail "$1: the detail does not name the seq"
  grep -m1 '"class":' "$1.json" | grep -q '"not-ready"' || fail "$1: JSON: first class is not not-ready"
  grep -m1 '"ranks":' "$1.json" | grep -q "\[0, 1\]" || fail "$1: JSON: first ranks are not 0,1"
  ! grep -q "^divergence: api-error" "$1.txt" || fail "$1: the refused call is reported twice: $(cat "$1.txt")"
}
run_pair early
not_ready early "$USE"
# Polling the child instead: the query on NULL is where the program goes wrong.
run_pair childpoll
not_ready childpoll "$QUERY"
# The clean twin: the parent polled first hands the child out; nothing to report.
run_pair polled
[ "$(cat polled.rc)" -eq 0 ] || fail "polled: compare should be consistent: $(cat polled.txt)"
# The poll of the parent registered the child under the split's identity: one child, both ranks.
grep -q "2 communicators, 2 calls aligned" polled.txt || fail "polled: the child is not one communicator: $(cat polled.txt)"
echo "ok"
