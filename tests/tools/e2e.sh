# e2e.sh — the trace tools on real traces: e2e_prog under `lockstep run` (the
# recorder preloaded, the stand-in NCCL and fake CUDA driver underneath), then
# compare, trace export and confirm. ctest provides LS_BIN, LS_PROG, LS_SRC, LS_INC, LS_INC_STANDIN,
# LS_FAKECUDA, LS_WORK.
set -u
fail() {
  echo "FAIL (tools e2e): $*" >&2
  exit 1
}
rm -rf "$LS_WORK"
mkdir -p "$LS_WORK"
cd "$LS_WORK" || fail cd
line() { grep -n "E2E:$1 " "$LS_SRC" | cut -d: -f1; }
A=$(line opmismatch-a)
B=$(line opmismatch-b)
S=$(line skip)
[ -n "$A" ] && [ -n "$B" ] && [ -n "$S" ] || fail "markers not found in $LS_SRC"

run_pair() { # MODE DIR [WANT]: lockstep run exits WANT (0; 85 when the side channel reported a divergence)
  LD_LIBRARY_PATH="$LS_FAKECUDA" "$LS_BIN" run --trace-dir "$2" -- \
    sh -c "LS_TEST_UID=$1 RANK=0 '$LS_PROG' $1 & LS_TEST_UID=$1 RANK=1 '$LS_PROG' $1; wait" 2> "$2.err"
  rc=$?
  [ $rc -eq "${3:-0}" ] || fail "$1: lockstep run exited $rc, want ${3:-0}: $(cat "$2.err")"
  [ "$(ls "$2"/*.lstrace | wc -l)" -eq 2 ] || fail "$1: expected two traces"
}

run_pair ok ok
"$LS_BIN" compare ok > ok.txt
[ $? -eq 0 ] || fail "ok: compare should be consistent: $(cat ok.txt)"

run_pair opmismatch op 85
grep -q "^lockstep run: the ranks diverged or hung" op.err || fail "opmismatch: run's summary: $(cat op.err)"
"$LS_BIN" compare op > op.txt
[ $? -eq 1 ] || fail "opmismatch: compare should exit 1"
head -1 op.txt | grep -Eq "^divergence: op-mismatch on comm 0x[0-9a-f]+ at seq 1: rank 0 ncclBroadcast\(count=4, dtype=ncclFloat32, root=0\) at .*e2e_prog\.c:$A vs rank 1 ncclAllReduce\(count=4, dtype=ncclFloat32, redop=ncclSum\) at .*e2e_prog\.c:$B\$" ||
  fail "opmismatch: first line: $(head -1 op.txt)"
"$LS_BIN" compare --format=json op > op.json
grep -q '"class":	"op-mismatch"' op.json || fail "opmismatch: JSON class"

run_pair skip skip
"$LS_BIN" compare skip > skip.txt
[ $? -eq 1 ] || fail "skip: compare should exit 1"
head -1 skip.txt | grep -Eq "^divergence: skip on comm 0x[0-9a-f]+ at seq 2: rank 0 ncclAllReduce\(count=8, .*e2e_prog\.c:$S vs rank 1 \(no call; its last was seq 1 .*\)\$" ||
  fail "skip: first line: $(head -1 skip.txt)"
grep -q "exited cleanly after seq 1" skip.txt || fail "skip: detail"

"$LS_BIN" trace export --format=perfetto -o op.perfetto.json op || fail "export perfetto"
grep -q '"name":	"first divergence: op-mismatch at seq 1"' op.perfetto.json || fail "perfetto: no divergence mark"
"$LS_BIN" trace export op > op.export.json || fail "export json"
grep -q '"api":	"ncclBroadcast"' op.export.json || fail "export json: no ncclBroadcast record"

# confirm with findings as lint reports them: the branch's two collectives.
cat > lint.json <<JSON
{"version":1,"tool":"lockstep","findings":[
 {"rule":"rank-divergent-collective","file":"tests/tools/e2e_prog.c","line":$B,"column":5,"function":"main",
  "message":"m","fingerprint":"f1","notes":[],
  "sites":[{"file":"tests/tools/e2e_prog.c","line":$B,"column":5,"callee":"ncclAllReduce"},
           {"file":"tests/tools/e2e_prog.c","line":$A,"column":5,"callee":"ncclBroadcast"}]},
 {"rule":"rank-divergent-collective","file":"tests/tools/e2e_prog.c","line":$S,"column":3,"function":"main",
  "message":"m","fingerprint":"f2","notes":[],
  "sites":[{"file":"tests/tools/e2e_prog.c","line":$S,"column":3,"callee":"ncclAllReduce"}]}],"tus":[]}
JSON
"$LS_BIN" confirm --findings lint.json --traces op > confirm-op.txt
[ $? -eq 1 ] || fail "confirm op: exit should be 1: $(cat confirm-op.txt)"
grep -q "^confirmed .*e2e_prog.c:$B  op-mismatch" confirm-op.txt || fail "confirm op: $(cat confirm-op.txt)"
grep -q "^exercised .*e2e_prog.c:$S" confirm-op.txt || fail "confirm op, second finding: $(cat confirm-op.txt)"
"$LS_BIN" confirm --findings lint.json --traces skip > confirm-skip.txt
[ $? -eq 1 ] || fail "confirm skip: exit should be 1"
grep -q "^confirmed .*e2e_prog.c:$S  skip" confirm-skip.txt || fail "confirm skip: $(cat confirm-skip.txt)"
"$LS_BIN" confirm --findings lint.json --traces ok > confirm-ok.txt
[ $? -eq 0 ] || fail "confirm ok: exit should be 0: $(cat confirm-ok.txt)"

# A finding at the call of a helper: the run's site is inside the helper, one of
# the recorded caller frames is on the finding's line.
H=$(line helper-call)
run_pair helper helper 85
cat > lint-helper.json <<JSON
{"version":1,"tool":"lockstep","findings":[
 {"rule":"rank-divergent-collective","file":"tests/tools/e2e_prog.c","line":$H,"column":7,"function":"main",
  "message":"m","fingerprint":"f3","notes":[],
  "sites":[{"file":"tests/tools/e2e_prog.c","line":$H,"column":7,"callee":"share_config"}]}],"tus":[]}
JSON
"$LS_BIN" confirm --findings lint-helper.json --traces helper > confirm-helper.txt
[ $? -eq 1 ] || fail "confirm helper: exit should be 1: $(cat confirm-helper.txt)"
grep -q "^confirmed .*e2e_prog.c:$H  op-mismatch" confirm-helper.txt || fail "confirm helper: $(cat confirm-helper.txt)"
"$LS_BIN" trace export helper > helper.export.json || fail "export helper"
grep -q '"callers":	\["0x' helper.export.json || fail "export: no callers recorded: $(grep -m3 callers helper.export.json)"

# A rules file the rules library rejects is left out with a note naming where it is wrong;
# the others still serve and the tools print numbers where the names came from it.
mkdir -p badrules
sed 's/"enums": {/"enums": {,/' "${LOCKSTEP_RULES_DIR:?}/nccl.json" > badrules/nccl.json
cp "$LOCKSTEP_RULES_DIR/mpi.json" badrules/
LOCKSTEP_RULES_DIR=$PWD/badrules "$LS_BIN" compare op > badrules.txt 2> badrules.err
[ $? -eq 1 ] || fail "bad rules: compare should still exit 1: $(cat badrules.err)"
grep -Eq "^lockstep: note: $PWD/badrules/nccl\.json:[0-9]+:[0-9]+: error: invalid JSON in rules file; ignored\$" badrules.err ||
  fail "bad rules: note: $(cat badrules.err)"
head -1 badrules.txt | grep -q "ncclBroadcast(count=4, dtype=7, root=0)" || fail "bad rules: numbers: $(head -1 badrules.txt)"

# With the analyzer built, the whole chain: lint's own findings, confirmed by the run.
"$LS_BIN" lint --format=json "$LS_SRC" -- -I"$LS_INC" -I"$LS_INC_STANDIN" > real-lint.json 2> lint.err
rc=$?
if [ $rc -ne 2 ] || ! grep -q "no analyzer" lint.err; then
  grep -q '"findings"' real-lint.json || fail "lint output: $(cat lint.err)"
  "$LS_BIN" confirm --findings real-lint.json --traces op > confirm-real.txt
  [ $? -eq 1 ] || fail "lint + op run should confirm a finding: $(cat confirm-real.txt) $(cat real-lint.json)"
  "$LS_BIN" confirm --findings real-lint.json --traces helper > confirm-real-helper.txt
  grep -q "^confirmed .*e2e_prog.c:$H " confirm-real-helper.txt ||
    fail "lint's finding at the helper's call should be confirmed by the helper run: $(cat confirm-real-helper.txt)"
fi
echo ok
