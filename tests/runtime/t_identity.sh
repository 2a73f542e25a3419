# Communicator identity is equal on every rank: 4 rank processes init from one
# unique id, split by color (key differs per rank), split again, shrink; ids must
# agree within a color and differ across colors and ordinals.
. "$(dirname "$0")/lib.sh"
for r in 0 1 2 3; do
  mkdir -p "$T/r$r"
  RANK=$r WORLD_SIZE=4 LS_TEST_UID=ident LOCKSTEP_TRACE_DIR="$T/r$r" LD_PRELOAD="$LS_LIB" \
    "$LS_PROG" split || fail "rank $r failed"
  "$LS_DUMP" "$(one_trace "$T/r$r")" > "$T/d$r" || fail "dump $r"
  # world, split a, split b, shrink ids in order of creation
  grep -E 'api=ncclComm(InitRank|Split|Shrink) ' "$T/d$r" | kv comm > "$T/ids$r"
  grep -q ' rank=-1 launcher' "$T/d$r" && fail "launcher rank missing"
done
grep -q '^header .* rank=2 size=4 ' "$T/d2" || fail "launcher rank/size not in the header"
w0=$(sed -n 1p "$T/ids0")
for r in 1 2 3; do [ "$(sed -n 1p "$T/ids$r")" = "$w0" ] || fail "world id differs on rank $r"; done
for k in 2 3; do
  [ "$(sed -n ${k}p "$T/ids0")" = "$(sed -n ${k}p "$T/ids2")" ] || fail "split $k differs between ranks 0 and 2 (same color)"
  [ "$(sed -n ${k}p "$T/ids1")" = "$(sed -n ${k}p "$T/ids3")" ] || fail "split $k differs between ranks 1 and 3 (same color)"
  [ "$(sed -n ${k}p "$T/ids0")" != "$(sed -n ${k}p "$T/ids1")" ] || fail "split $k equal across colors"
done
[ "$(sed -n 2p "$T/ids0")" != "$(sed -n 3p "$T/ids0")" ] || fail "second split has the first's identity"
# shrink excluding rank 3: equal on 0..2, absent on 3
s0=$(sed -n 4p "$T/ids0")
[ -n "$s0" ] && [ "$s0" != 0000000000000000 ] || fail "no shrink id on rank 0"
for r in 1 2; do [ "$(sed -n 4p "$T/ids$r")" = "$s0" ] || fail "shrink id differs on rank $r"; done
[ "$(sed -n 4p "$T/ids3")" = 0000000000000000 ] || fail "excluded rank got a shrink id"
# the allreduce on each comm carries that comm's id and the split comm's rank
grep 'api=ncclAllReduce' "$T/d1" | kv comm | head -3 > "$T/ar1"
[ "$(sed -n 1p "$T/ar1")" = "$w0" ] || fail "allreduce on world not tagged with its id"
[ "$(sed -n 2p "$T/ar1")" = "$(sed -n 2p "$T/ids1")" ] || fail "allreduce on split not tagged"
# the split record keeps the parent (aux0) and the per-rank key (aux1 high half)
grep -m1 'api=ncclCommSplit' "$T/d3" | grep -q " aux1=$(( (3 << 32) | 1 ))\$" || fail "split color/key not recorded"
echo ok
