# `lockstep trace export --ranks LIST --around-divergence N | --seq A-B`: what a timeline of a
# thousand-rank run needs to stay small enough to open. On generated traces (16 ranks, 3
# communicators, rank 5 diverging at seq 1500 of the world): only the ranks asked for, only the
# calls around the divergence (or in the seq range), the divergence still marked; bad lists exit 2.
set -u
command -v python3 > /dev/null || { echo "no python3: skipped"; exit 77; }
W="$LS_WORK"
rm -rf "$W"
mkdir -p "$W"
fail() { echo "FAIL (export_check): $*" >&2; exit 1; }
"$LS_GEN" -o "$W/t" -n 16 -m 2000 -c 3 -d 5:0:1500:op || fail "gen_traces failed"
"$LS_GEN" -o "$W/same" -n 4 -m 100 -c 2 || fail "gen_traces failed"
"$LS_BIN" trace export --format=perfetto --ranks 0,5 --around-divergence 3 -o "$W/p.json" "$W/t" ||
  fail "perfetto export around the divergence failed"
"$LS_BIN" trace export --format=json --ranks 3-4,9 --seq 100-110 -o "$W/j.json" "$W/t" || fail "json export of a seq range failed"
"$LS_BIN" trace export --format=json -o "$W/all.json" "$W/t" || fail "plain export failed"
python3 - "$W/p.json" "$W/j.json" "$W/all.json" <<'P' || fail "exports keep the wrong records"
import json, sys
p = json.load(open(sys.argv[1]))["traceEvents"]
names = sorted(e["args"]["name"] for e in p if e.get("name") == "process_name")
assert len(names) == 2 and names[0].startswith("rank 0 ") and names[1].startswith("rank 5 "), names
marks = [e for e in p if e.get("ph") == "i" and e["name"].startswith("first divergence: op-mismatch at seq 1500")]
assert marks, "the divergence is not marked"
calls = [e for e in p if e.get("ph") == "X"]
world = {e["args"]["comm"] for e in calls if e["args"].get("seq") == 1500}
assert len(world) == 1, world
seqs = sorted(e["args"]["seq"] for e in calls if e["args"].get("comm") in world)
assert seqs and seqs[0] == 1497 and seqs[-1] == 1503 and len(seqs) == 14, seqs  # 7 calls on each of 2 ranks
assert len(calls) <= 16, len(calls)  # and at most one call on another communicator each
j = json.load(open(sys.argv[2]))["traces"]
assert sorted(t["header"]["launcher_rank"] for t in j) == [3, 4, 9]
for t in j:
    recs = t["records"]
    assert recs[0]["seq"] == 100 and recs[-1]["seq"] == 110, (recs[0]["seq"], recs[-1]["seq"])
    assert 11 <= len(recs) <= 13, len(recs)  # the world's 100..110, plus another communicator's calls between
allt = json.load(open(sys.argv[3]))["traces"]
assert len(allt) == 16 and all(len(t["records"]) > 2000 for t in allt)
P
bad() { # expected-message args...
  msg=$1; shift
  "$LS_BIN" trace export "$@" > "$W/out" 2> "$W/err"; st=$?
  [ $st -eq 2 ] || fail "trace export $*: exit $st, expected 2"
  grep -q -- "$msg" "$W/err" || fail "trace export $*: no '$msg' in: $(cat "$W/err")"
}
bad "--ranks takes a list" --ranks 3-1 "$W/t"
bad "--ranks takes a list" --ranks 1,,2 "$W/t"
bad "no trace of these ranks" --ranks 99 "$W/t"
bad "--seq takes FIRST-LAST" --seq 5 "$W/t"
bad "--seq takes FIRST-LAST" --seq 5-9x "$W/t"
bad "--seq takes FIRST-LAST" --seq -1-3 "$W/t"
bad "--seq takes FIRST-LAST" --seq 9-5 "$W/t"
bad "give one" --seq 1-5 --around-divergence 2 "$W/t"
bad "takes a number of calls" --around-divergence x "$W/t"
bad "compare found no divergence" --around-divergence 2 "$W/same"
rm -rf "$W"
echo ok
