# compare by the digest index: the verdict is the one the records give (the scan, and traces
# without an index), the divergence is named exactly in the last block and in a block whose
# digest collides by construction, and the index is what compare read. Index and traces from
# bench/synth/gen_traces (as the recorder writes them) and from the recorder itself.
set -u
W="$LS_WORK"
rm -rf "$W"
mkdir -p "$W"
fail() { echo "FAIL (index_check): $*" >&2; exit 1; }
N=4 STEPS=1000 K=64
stats() { LOCKSTEP_COMPARE_STATS=1 "$LS_BIN" compare "$1" 2>&1 >/dev/null | grep 'compare stats'; }
# same output with the index, with the scan, and without index files; first line names $2
check() { # dir "class at seq S" label
  "$LS_BIN" compare "$1" > "$W/idx.out" 2>&1
  LOCKSTEP_COMPARE_INDEX=0 "$LS_BIN" compare "$1" > "$W/scan.out" 2>&1
  diff "$W/scan.out" "$W/idx.out" > /dev/null || fail "$3: the index changes the verdict: $(diff "$W/scan.out" "$W/idx.out")"
  head -1 "$W/idx.out" | grep -q "^divergence: $2:" || fail "$3: first line is not '$2': $(head -1 "$W/idx.out")"
  s=$(stats "$1")
  echo "$s" | grep -q ": $N of $N traces by their index (block $K)" || fail "$3: index not used: $s"
  echo "$s" | grep -q "summaries read 0," || fail "$3: records read although indexed: $s"
}
gen() { # dir args...
  d=$1; shift
  "$LS_GEN" -o "$d" -n $N -m $STEPS -c 3 -k $K "$@" || fail "gen_traces $*"
}
# the last call of the world (seq 999, in its last, not full, block) and of its last full block
gen "$W/last" -d 1:0:999:count
check "$W/last" "count-mismatch on comm 0x[0-9a-f]* at seq 999" "last block"
gen "$W/lastfull" -d 3:0:959:skip
check "$W/lastfull" "skip on comm 0x[0-9a-f]* at seq 959" "last full block"
# without index files, the same
"$LS_BIN" compare "$W/last" > "$W/last.out" 2>&1
rm "$W"/last/*.idx
"$LS_BIN" compare "$W/last" > "$W/noidx.out" 2>&1
diff "$W/last.out" "$W/noidx.out" > /dev/null || fail "no index: other verdict: $(diff "$W/last.out" "$W/noidx.out")"
stats "$W/last" | grep -q ": 0 of $N traces by their index" || fail "no index: $(stats "$W/last")"
# a block whose own digest collides (every rank's, at the divergent call): the chained one
# still differs there; a chained digest that collides from that call on: the block's own
# differs there. Either alone finds the call exactly.
gen "$W/local" -x local:700 -d 2:0:700:count
check "$W/local" "count-mismatch on comm 0x[0-9a-f]* at seq 700" "block digest collision"
gen "$W/chain" -x chain:700 -d 2:0:700:op
check "$W/chain" "op-mismatch on comm 0x[0-9a-f]* at seq 700" "chained digest collision"
# a damaged index entry, an index of another process: not used, said so, same verdict
gen "$W/bad" -d 1:0:500:dtype
"$LS_BIN" compare "$W/bad" > "$W/bad.good" 2>&1
python3 - "$W/bad/synth.00002.lstrace.idx" "$W/bad/synth.00003.lstrace.idx" <<'PY' || fail "cannot damage the index"
import struct, sys
a = bytearray(open(sys.argv[1], "rb").read())
eo = struct.unpack_from("<Q", a, 64)[0]   # entries_offset
a[eo + 3 * 72 + 48] ^= 0x40              # entry 3's chain
open(sys.argv[1], "wb").write(a)
b = bytearray(open(sys.argv[2], "rb").read())
struct.pack_into("<i", b, 32, 4242)      # pid
open(sys.argv[2], "wb").write(b)
PY
"$LS_BIN" compare "$W/bad" > "$W/bad.out" 2>&1
grep -q "synth.00002.lstrace.idx: not used (entry 3 is damaged)" "$W/bad.out" || fail "damaged entry not named: $(cat "$W/bad.out")"
grep -q "synth.00003.lstrace.idx: not used (written for another process (pid 4242))" "$W/bad.out" ||
  fail "foreign index not named: $(cat "$W/bad.out")"
grep -v "lstrace.idx: not used" "$W/bad.out" | diff "$W/bad.good" - > /dev/null || fail "damaged index: other verdict"
stats "$W/bad" | grep -q ": 2 of $N traces by their index" || fail "damaged index: $(stats "$W/bad")"
# the recorder's own index (4 ranks of the stand-in program, blocks of $K)
if [ -n "${LS_PROG:-}" ]; then
  R="$W/rec"
  r=0
  while [ $r -lt $N ]; do
    RANK=$r WORLD_SIZE=$N LOCKSTEP_TRACE_DIR="$R" LOCKSTEP_ONLINE=0 LOCKSTEP_INDEX_BLOCK=$K LD_LIBRARY_PATH="$LS_FAKECUDA" \
      LD_PRELOAD="$LS_LIB" "$LS_PROG" $STEPS 3 2:1:20:root || fail "rank $r failed"
    r=$((r + 1))
  done
  [ "$(ls "$R" | grep -c '\.lstrace\.idx$')" -eq $N ] || fail "the recorder wrote no index: $(ls "$R")"
  check "$R" "root-mismatch on comm 0x[0-9a-f]* at seq 20" "recorder"
fi
rm -rf "$W"
echo ok
