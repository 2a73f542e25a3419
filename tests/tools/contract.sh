# contract.sh — compare's contract classes (not-ready, after-abort) on real
# traces: contract_prog under `lockstep run` (recorder preloaded, stand-in NCCL and
# fake CUDA driver underneath), two ranks per mode, both issuing the same calls.
# ctest provides LS_BIN, LS_PROG, LS_SRC, LS_FAKECUDA, LS_WORK.
set -u
fail() {
  echo "FAIL (tools contract): $*" >&2
  exit 1
}
rm -rf "$LS_WORK"
mkdir -p "$LS_WORK"
cd "$LS_WORK" || fail cd
unset LS_STANDIN_ASYNC_END LS_STANDIN_POLLS LOCKSTEP_RECORD_QUERIES LS_STANDIN_SPLIT_IN_PROGRESS 2>/dev/null || true
line() { grep -n "CT:$1 " "$LS_SRC" | cut -d: -f1; }
NOTREADY=$(line notready)
DESTROY=$(line destroy)
AFTER=$(line after-abort)
AFTERERR=$(line after-error)
POLL=$(line query)
[ -n "$NOTREADY" ] && [ -n "$DESTROY" ] && [ -n "$AFTER" ] && [ -n "$AFTERERR" ] && [ -n "$POLL" ] ||
  fail "markers not found in $LS_SRC"

run_pair() { # MODE [DIR]
  d=${2:-$1}
  LD_LIBRARY_PATH="$LS_FAKECUDA" "$LS_BIN" run --trace-dir "$d" -- \
    sh -c "LS_TEST_UID=$d RANK=0 '$LS_PROG' $1 & LS_TEST_UID=$d RANK=1 '$LS_PROG' $1; wait" ||
    fail "$1: the program failed"
  [ "$(ls "$d"/*.lstrace | wc -l)" -eq 2 ] || fail "$1: expected two traces"
  "$LS_BIN" compare "$d" > "$d.txt"
  echo $? > "$d.rc"
  "$LS_BIN" compare --format=json "$d" > "$d.json" 2> /dev/null
}
consistent() { # DIR
  [ "$(cat "$1.rc")" -eq 0 ] || fail "$1: compare should be consistent: $(cat "$1.txt")"
}
# first divergence: DIR CLASS SEQ LINE (both ranks, at LINE of contract_prog.c)
first_is() {
  [ "$(cat "$1.rc")" -eq 1 ] || fail "$1: compare should exit 1: $(cat "$1.txt")"
  head -1 "$1.txt" | grep -Eq "^divergence: $2 on comm 0x[0-9a-f]+ at seq $3: rank 0 .* at .*contract_prog\.c:$4 vs rank 1 .* at .*contract_prog\.c:$4\$" ||
    fail "$1: first line: $(head -1 "$1.txt")"
  grep -m1 '"class":' "$1.json" | grep -q "\"$2\"" || fail "$1: JSON: first class is not $2"
  grep -m1 '"seq":' "$1.json" | grep -q "	$3,\$" || fail "$1: JSON: first seq is not $3"
  grep -m1 '"ranks":' "$1.json" | grep -q "\[0, 1\]" || fail "$1: JSON: first ranks are not 0,1"
  grep -m1 '"line":' "$1.json" | grep -q "	$4,\$" || fail "$1: JSON: first site is not line $4"
}
lacks() { # DIR CLASS
  ! grep -q "^divergence: $2 " "$1.txt" || fail "$1: no $2 expected: $(cat "$1.txt")"
}

# The correct program polls the init to success and the finalize before destroy.
run_pair ready
consistent ready
LOCKSTEP_RECORD_QUERIES=1 run_pair ready ready_allq
consistent ready_allq

# A collective right after the init returned ncclInProgress: seq 0 on both ranks;
# the stand-in refuses it (ncclInvalidArgument) like NCCL, and that error is part of
# the not-ready report, not a second divergence.
run_pair notready
first_is notready not-ready 0 "$NOTREADY"
grep -q "ncclCommInitRankConfig returned ncclInProgress" notready.txt || fail "notready: detail"
grep -q "it returned ncclInvalidArgument; 1 later call on rank 0 too" notready.txt || fail "notready: rc / count"
lacks notready api-error
[ "$(grep -c '^divergence:' notready.txt)" -eq 1 ] || fail "notready: one divergence expected: $(cat notready.txt)"
LOCKSTEP_RECORD_QUERIES=1 run_pair notready notready_allq
first_is notready_allq not-ready 0 "$NOTREADY"

# confirm joins a lint finding at the call with the not-ready divergence there.
cat > nr_lint.json <<JSON
{"version":1,"tool":"lockstep","findings":[
 {"rule":"nonblocking-not-ready","file":"tests/tools/contract_prog.c","line":$NOTREADY,"column":5,"function":"main",
  "message":"m","fingerprint":"f1","notes":[],
  "sites":[{"file":"tests/tools/contract_prog.c","line":$NOTREADY,"column":5,"callee":"ncclAllReduce"}]}],"tus":[]}
JSON
"$LS_BIN" confirm --findings nr_lint.json --traces notready > confirm.txt
[ $? -eq 1 ] && grep -q "^confirmed .*not-ready on comm" confirm.txt || fail "confirm: $(cat confirm.txt)"
"$LS_BIN" confirm --findings nr_lint.json --traces ready > confirm_ready.txt
[ $? -eq 0 ] && grep -q "^not-exercised" confirm_ready.txt || fail "confirm (ready): $(cat confirm_ready.txt)"

# Destroy right after a non-blocking finalize: no seq of its own, one past the last.
run_pair fin
first_is fin not-ready 1 "$DESTROY"
grep -q "before the non-blocking ncclCommFinalize was seen to complete" fin.txt || fail "fin: detail"

# A split with a NULL config inherits the non-blocking mode (nccl.h). NCCL 2.28.3 hands
# the child out only through the parent's poll (tests/split covers that); a version that
# returns ncclInProgress with the child set, as nccl.h allows any non-blocking call to
# (the stand-in's LS_STANDIN_SPLIT_IN_PROGRESS=1): the recorder flags the child so, and
# compare reports the unpolled AllReduce on it. Its rank is unknown then (the stand-in,
# like NCCL, reads 0 ranks until the split's job ended).
LS_STANDIN_SPLIT_IN_PROGRESS=1 run_pair inherit
first_is inherit not-ready 0 "$(line inherit)"
grep -q "ncclCommSplit returned ncclInProgress" inherit.txt || fail "inherit: detail"
# NCCL knows a split's rank only once its job ended: the refused call takes no seq
grep -q "the call has no sequence number of its own: seq 0" inherit.txt || fail "inherit: the call took a seq"

# A non-blocking creation inside a group: the call returns ncclSuccess, the group's
# ncclGroupEnd ncclInProgress; the AllReduce right after is not-ready, the polled
# program is consistent.
run_pair grouped
first_is grouped not-ready 0 "$(line grouped)"
grep -q "returned success inside a group whose outer ncclGroupEnd returned ncclInProgress" grouped.txt ||
  fail "grouped: detail"
run_pair grouped_ok
consistent grouped_ok

# A traces' writer that does not say it records the ending poll: not judged, a note.
mkdir -p old
for f in notready/*.lstrace; do
  cp "$f" old/ || fail "copy"
done
for f in old/*.lstrace; do
  b=$(od -An -tu1 -j20 -N1 "$f" | tr -d ' ')
  printf "$(printf '\\%03o' $((b & 0xef)))" | dd of="$f" bs=1 seek=20 conv=notrunc 2> /dev/null
done
"$LS_BIN" compare old > old.txt
lacks old not-ready
grep -q "not-ready is not judged" old.txt || fail "old: note missing: $(cat old.txt)"

# Collectives after ncclCommAbort; aborting last is fine.
run_pair abort
first_is abort after-abort 1 "$AFTER"
grep -q "after ncclCommAbort on it; 1 later call on rank 0 too" abort.txt || fail "abort: detail"
run_pair abort_ok
consistent abort_ok

# The init ends in an error state (LS_STANDIN_ASYNC_END=6, ncclRemoteError): the
# query is an async-error, and the collective the program issues anyway after-abort.
export LS_STANDIN_ASYNC_END=6
run_pair asyncerr
first_is asyncerr async-error 0 "$POLL"
sed -n 3p asyncerr.txt | grep -Eq "^divergence: after-abort on comm 0x[0-9a-f]+ at seq 0: rank 0 .*contract_prog\.c:$AFTERERR vs rank 1 .*contract_prog\.c:$AFTERERR\$" ||
  fail "asyncerr: second divergence: $(cat asyncerr.txt)"
grep -q "reported its asynchronous state ncclRemoteError" asyncerr.txt || fail "asyncerr: detail"
run_pair asyncerr_ok
lacks asyncerr_ok after-abort
grep -q "^divergence: async-error " asyncerr_ok.txt || fail "asyncerr_ok: the async error itself is still reported"
echo "tools contract: ok"
