# The ring mode (LOCKSTEP_TRACE_RING=1): the newest LOCKSTEP_TRACE_CAPACITY calls are kept
# (capacity rounded up to 64), oldest overwritten, while the digest index covers the whole
# history; a ring whose slots are all still needed by the recorder's own readers drops calls
# (counted, trace partial) instead of blocking or overwriting.
. "$(dirname "$0")/lib.sh"
run() { # DIR CAP N USEC [env...]
  d=$1 cap=$2 n=$3 us=$4
  shift 4
  env LOCKSTEP_TRACE_DIR="$d" LOCKSTEP_TRACE_RING=1 LOCKSTEP_TRACE_CAPACITY="$cap" LOCKSTEP_INDEX_BLOCK=64 \
    LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$@" "$LS_PROG" loop "$n" "$us" || fail "program failed ($d)"
}

# 1. 1,000 calls (and the init) through a ring of 100 -> 128 slots: exactly the last 128
# ordinals, oldest first, in order, none dropped; the index covers all 1,001.
run "$T/keep" 100 1000 200
f=$(one_trace "$T/keep")
"$LS_DUMP" "$f" > "$T/keep.dump" || fail "dump failed"
grep -Eq '^header .* nrecords=1001 capacity=128 flags=0x32 ' "$T/keep.dump" || fail "$(head -1 "$T/keep.dump")"
grep -qx 'ring first=873 dropped=0' "$T/keep.dump" || fail "$(grep '^ring' "$T/keep.dump")"
grep '^rec ' "$T/keep.dump" > "$T/keep.recs"
[ "$(wc -l < "$T/keep.recs")" -eq 128 ] || fail "expected 128 records"
[ "$(grep -c ' state=2 api=ncclAllReduce ' "$T/keep.recs")" -eq 128 ] || fail "not all records intact"
# ordinal k holds the loop's call k-1 (count k-1, seq k-1): every one, in order
awk '{ split($7, c, "="); split($6, s, "="); if ($2 != 872 + NR || c[2] != $2 - 1 || s[2] != $2 - 1) exit 1 }' \
  "$T/keep.recs" || fail "records out of order: $(head -2 "$T/keep.recs")"
"$LS_DUMP" --index "$f.idx" > "$T/keep.idx" || fail "index dump failed"
grep -Eq '^index block=64 covered=1001 entries=15 ' "$T/keep.idx" || fail "index: $(head -1 "$T/keep.idx")"
# the tools read it oldest first, by ordinal
"$LS_BIN" trace export "$T/keep" > "$T/keep.json" || fail "export failed"
if command -v python3 > /dev/null; then
  python3 - "$T/keep.json" <<'P' || fail "export: $(head -c 600 "$T/keep.json")"
import json, sys
t = json.load(open(sys.argv[1]))["traces"][0]
h, recs = t["header"], t["records"]
ok = h["ring"] and h["overwritten"] == 873 and h["dropped"] == 0 and not h["partial"] and len(recs) == 128 \
     and [r["index"] for r in recs] == list(range(873, 1001)) and [r["seq"] for r in recs] == list(range(872, 1000))
sys.exit(0 if ok else 1)
P
fi

# 2. Without the ring the trace stays version 2 (the dump reads only 2 and 3) with no ring line.
LOCKSTEP_TRACE_DIR="$T/plain" LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 10 || fail "plain run"
"$LS_DUMP" "$(one_trace "$T/plain")" > "$T/plain.dump" || fail "plain dump"
! grep -q '^ring' "$T/plain.dump" || fail "a plain trace reads as a ring"
od -An -tu4 -j8 -N4 "$(one_trace "$T/plain")" | grep -qx ' *2' || fail "plain trace is not version 2"
od -An -tu4 -j8 -N4 "$f" | grep -qx ' *3' || fail "ring trace is not version 3"

# 3. A ring smaller than one tick's calls: with no tick during the run (LOCKSTEP_POLL_MS
# 60 s) the readers' floor stays at 0, so the 64 slots take ordinals 0..63 and the other
# 19,937 calls are dropped, counted, and the trace is partial — never an overwritten slot
# a reader still needs.
run "$T/drop" 64 20000 0 LOCKSTEP_POLL_MS=60000
"$LS_DUMP" "$(one_trace "$T/drop")" > "$T/drop.dump" || fail "dump failed"
grep -Eq '^header .* nrecords=64 capacity=64 flags=0x33 ' "$T/drop.dump" || fail "$(head -1 "$T/drop.dump")"
grep -qx 'ring first=0 dropped=19937' "$T/drop.dump" || fail "$(grep '^ring' "$T/drop.dump")"
grep '^rec ' "$T/drop.dump" | awk '{ split($7, c, "="); if ($2 != NR - 1 || (NR > 1 && c[2] != NR - 2)) exit 1 }' ||
  fail "dropped ring does not hold the first 64 calls"
"$LS_DUMP" --index "$(one_trace "$T/drop").idx" | grep -Eq '^index block=64 covered=64 ' || fail "index of the dropped ring"

# 4. A slot the watchdog still needs is never reused: no call ever completes on the device
# (LS_FAKE_CUDA_NEVER), so the low-water mark stays at the first collective (ordinal 1) and a
# ring of 64 holds ordinals 0..64 — the rest are dropped, though ticks keep coming.
run "$T/held" 64 1000 200 LS_FAKE_CUDA_NEVER=1
"$LS_DUMP" "$(one_trace "$T/held")" > "$T/held.dump" || fail "dump failed"
grep -Eq '^header .* nrecords=65 capacity=64 flags=0x33 ' "$T/held.dump" || fail "$(head -1 "$T/held.dump")"
grep -qx 'ring first=1 dropped=936' "$T/held.dump" || fail "$(grep '^ring' "$T/held.dump")"
# 5. compare on ring traces of two ranks that part at the loop's call 500 (count 501 on rank 1):
# a ring that did not come round gives exactly the verdict of plain traces; one that came
# round past the divergence (128 slots, calls 872.. kept) gives the index's verdict: class
# overwritten in the block the digests localise (seqs 448-511 of blocks of 64), exit 1 — not
# a hole in the sequence, since the index covered the lost calls.
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LS_TEST_DIVERGE_AT=500 LOCKSTEP_TRACE_DIR="$T/cmp_plain" LD_LIBRARY_PATH="$LS_FAKECUDA"     LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 1000 || fail "plain rank $r"
  RANK=$r WORLD_SIZE=2 LS_TEST_DIVERGE_AT=950 LOCKSTEP_TRACE_DIR="$T/cmp_plain950" LD_LIBRARY_PATH="$LS_FAKECUDA" \
    LD_PRELOAD="$LS_LIB" "$LS_PROG" loop 1000 || fail "plain rank $r (950)"
  run "$T/cmp_ring" 2048 1000 0 RANK=$r WORLD_SIZE=2 LS_TEST_DIVERGE_AT=500
  run "$T/cmp_wrap" 128 1000 200 RANK=$r WORLD_SIZE=2 LS_TEST_DIVERGE_AT=500
  run "$T/cmp_live" 128 1000 200 RANK=$r WORLD_SIZE=2 LS_TEST_DIVERGE_AT=950
done
"$LS_BIN" compare "$T/cmp_plain" > "$T/cmp_plain.out"
[ $? -eq 1 ] || fail "plain compare: $(cat "$T/cmp_plain.out")"
"$LS_BIN" compare "$T/cmp_ring" > "$T/cmp_ring.out"
[ $? -eq 1 ] || fail "ring compare: $(cat "$T/cmp_ring.out")"
grep -q 'count' "$T/cmp_plain.out" || fail "plain verdict: $(cat "$T/cmp_plain.out")"
sed "s|$T/cmp_plain/[^ :]*|TRACE|g; s|/[^ ]*\.lstrace|TRACE|g" "$T/cmp_plain.out" > "$T/a"
sed "s|$T/cmp_ring/[^ :]*|TRACE|g; s|/[^ ]*\.lstrace|TRACE|g" "$T/cmp_ring.out" > "$T/b"
diff "$T/a" "$T/b" > /dev/null || fail "ring verdict differs from plain: $(diff "$T/a" "$T/b")"
"$LS_DUMP" "$(ls "$T"/cmp_ring/*.lstrace | head -1)" | grep -q '^ring first=0 ' || fail "the 2048 ring came round"
"$LS_BIN" compare "$T/cmp_wrap" > "$T/cmp_wrap.out"
[ $? -eq 1 ] || fail "wrapped ring compare: $(cat "$T/cmp_wrap.out")"
head -1 "$T/cmp_wrap.out" | grep -Eqx 'divergence: overwritten on comm 0x[0-9a-f]+ at seq 448: rank 0 \(its call there was overwritten\) vs rank 1 \(its call there was overwritten\)' ||
  fail "wrapped: $(cat "$T/cmp_wrap.out")"
grep -q "^  note: ranks 0 and 1 first differ in seqs 448-511 (the digest index's block 7 of 64 calls), but rank 0's ring trace .* kept only its newest 128 calls (873 overwritten; its oldest kept call on this communicator is seq 872)" \
  "$T/cmp_wrap.out" || fail "wrapped note: $(cat "$T/cmp_wrap.out")"
! grep -q 'jump from seq' "$T/cmp_wrap.out" || fail "wrapped: still a hole: $(cat "$T/cmp_wrap.out")"
"$LS_BIN" compare --format=json "$T/cmp_wrap" > "$T/cmp_wrap.json"
[ $? -eq 1 ] || fail "wrapped ring compare --format=json"
if command -v python3 > /dev/null; then
  python3 - "$T/cmp_wrap.json" <<'P' || fail "wrapped json: $(head -c 800 "$T/cmp_wrap.json")"
import json, sys
d = json.load(open(sys.argv[1]))
v = d["divergences"][0]
sys.exit(0 if d["status"] == "divergent" and v["class"] == "overwritten" and v["seq"] == 448 and v["ranks"] == [0, 1]
         and v["op"] == [None, None] and v["sites"] == [] else 1)
P
fi

# 6. The same ring of 128 with the ranks parting at call 950, inside the kept window: the
# first divergence (class, seq, ranks, calls, sites) is exactly that of plain traces.
"$LS_BIN" compare "$T/cmp_plain950" > "$T/cmp_plain950.out"
[ $? -eq 1 ] || fail "plain compare (950): $(cat "$T/cmp_plain950.out")"
"$LS_BIN" compare "$T/cmp_live" > "$T/cmp_live.out"
[ $? -eq 1 ] || fail "live-window compare: $(cat "$T/cmp_live.out")"
"$LS_DUMP" "$(ls "$T"/cmp_live/*.lstrace | head -1)" | grep -q '^ring first=873 ' || fail "the live ring did not come round"
grep -q '^divergence: count-mismatch on comm 0x[0-9a-f]* at seq 950: rank 0 ' "$T/cmp_plain950.out" ||
  fail "plain verdict (950): $(cat "$T/cmp_plain950.out")"
grep -A1 -m1 '^divergence:' "$T/cmp_plain950.out" > "$T/a"
grep -A1 -m1 '^divergence:' "$T/cmp_live.out" > "$T/b"
diff "$T/a" "$T/b" > /dev/null || fail "live-window verdict differs from plain: $(diff "$T/a" "$T/b")"
echo ok
