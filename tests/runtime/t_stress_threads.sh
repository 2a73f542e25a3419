# Stress item 1: 16 threads x 4 communicators (two owned by one thread each, two shared
# by seven threads under a lock), thousands of collectives, groups and send/recv, with
# errors the stand-in is told to produce. Results identical with and without the
# recorder (each thread also checks them against the stand-in's own hash); the trace
# holds exactly the calls issued per communicator, in order, numbered 0..n-1; two ranks
# that take turns on the shared communicators compare consistent.
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || { echo "no python3: skipped"; exit 77; }
N=${LS_STRESS_N:-600}
export LS_STANDIN_FAIL_MOD=7 LS_STANDIN_FAIL_RC=2 # ncclSystemError on every 7th count
plain=$(timeout 60 "$LS_STRESS" threads 16 4 "$N") || fail "plain run failed ($?): $plain"
pre=$(LS_STRESS_LOG="$T/log" LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" timeout 60 \
      "$LS_STRESS" threads 16 4 "$N") || fail "preloaded run failed ($?): $pre"
[ "$plain" = "$pre" ] || fail "output differs under the recorder: '$plain' vs '$pre'"
for rc in 0 2 4; do # success, the injected ncclSystemError, ncclInvalidArgument
  [ "$(awk -v rc=$rc '$1 == "call" && $6 == rc' "$T/log" | wc -l)" -gt 10 ] || fail "few calls with rc $rc in the log"
done
"$LS_BIN" trace export --format=json "$LOCKSTEP_TRACE_DIR" > "$T/export.json" || fail "export failed"
python3 "$LS_STRESS_CHECK" "$T/export.json" "$T/log" || fail "trace does not match the calls"
grep -q '"clean-exit"' "$T/export.json" || fail "no clean-exit flag"

# Two ranks, shared communicators in turn order (the same on both ranks).
unset LS_STANDIN_FAIL_MOD LS_STANDIN_FAIL_RC
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LS_TEST_UID=stress LOCKSTEP_TRACE_DIR="$T/ranks" LS_STRESS_LOG="$T/log$r" \
    LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" timeout 60 "$LS_STRESS" threads 16 4 200 ordered \
    > /dev/null &
done
wait %1 || fail "rank 0 failed"
wait %2 || fail "rank 1 failed"
for f in "$T"/ranks/*.lstrace; do
  "$LS_DUMP" "$f" > "$f.dump" || fail "dump of $f failed"
  r=$(sed -n 's/^header .* rank=\([0-9]*\) .*/\1/p' "$f.dump")
  python3 "$LS_STRESS_CHECK" "$f.dump" "$T/log$r" || fail "rank $r's trace does not match its calls"
done
"$LS_BIN" compare --format=json "$T/ranks" > "$T/cmp.json" || fail "two ranks not consistent: $(head -c 2000 "$T/cmp.json")"
python3 - "$T/cmp.json" <<'P' || fail "compare: $(head -c 2000 "$T/cmp.json")"
import json, sys
d = json.load(open(sys.argv[1]))
cs = d["communicators"]
ok = d["status"] == "consistent" and len(cs) == 4 and all(sorted(c["ranks_seen"]) == [0, 1] for c in cs)
sys.exit(0 if ok else 1)
P

# The same with errors on both ranks: compare names only api-error, nothing structural.
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LS_TEST_UID=stress LOCKSTEP_TRACE_DIR="$T/ranks_err" LS_STANDIN_FAIL_MOD=7 \
    LS_STANDIN_FAIL_RC=2 LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" timeout 60 \
    "$LS_STRESS" threads 16 4 100 ordered > /dev/null &
done
wait %1 || fail "rank 0 failed (errors)"
wait %2 || fail "rank 1 failed (errors)"
"$LS_BIN" compare --format=json "$T/ranks_err" > "$T/cmp_err.json"
[ $? -eq 1 ] || fail "injected errors should make compare exit 1"
python3 - "$T/cmp_err.json" <<'P' || fail "compare with errors: $(head -c 2000 "$T/cmp_err.json")"
import json, sys
d = json.load(open(sys.argv[1]))
cls = {v["class"] for v in d["divergences"]}
sys.exit(0 if cls == {"api-error"} else 1)
P
echo ok
