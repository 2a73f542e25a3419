# The synthetic generator (bench/synth/gen_traces) writes traces that compare reads as it
# reads the recorder's: 4 ranks run tests/scale/pattern_prog under liblockstep, the generator
# writes the same job, and `compare` (text and JSON) must print the same, up to what only a
# real run has: communicator identities (mapped to the job's numbering through each trace's
# ncclCommInitRank records), call sites, times and paths.
set -u
command -v python3 > /dev/null || { echo "no python3: skipped"; exit 77; }
W="$LS_WORK"
rm -rf "$W"
mkdir -p "$W"
fail() { echo "FAIL (synth_check): $*" >&2; exit 1; }
STEPS=1000 COMMS=3 N=4 K=64 # K: digest block, small enough for full blocks
# "HEX K": the communicators in order of creation on the first trace's rank
idmap() {
  "$LS_DUMP" "$(ls "$1"/*.lstrace | head -1)" |
    sed -n 's/.* api=ncclCommInitRank comm=\([0-9a-f]*\) .*/\1/p' | awk '{print $1, NR-1}'
}
normalize() { # dir format file
  idmap "$1" > "$3.ids"
  [ "$(wc -l < "$3.ids")" -eq "$COMMS" ] || fail "$1: expected $COMMS communicator creations"
  python3 "$(dirname "$0")/normalize.py" "$3.ids" "$2" "$3" || fail "$3: not compare's output"
}
for div in none 1:0:700:op 2:0:900:count 3:1:20:dtype 1:0:300:redop 2:2:20:root 3:0:500:skip 0:2:30:op; do
  name=$(echo "$div" | tr ':' '_')
  R="$W/$name.rec" G="$W/$name.gen"
  arg=$div; [ "$div" = none ] && arg=
  r=0
  while [ $r -lt $N ]; do
    RANK=$r WORLD_SIZE=$N LOCKSTEP_TRACE_DIR="$R" LOCKSTEP_ONLINE=0 LOCKSTEP_INDEX_BLOCK=$K LD_LIBRARY_PATH="$LS_FAKECUDA" \
      LD_PRELOAD="$LS_LIB" "$LS_PROG" $STEPS $COMMS $arg || fail "$div: rank $r failed"
    r=$((r + 1))
  done
  if [ -n "$arg" ]; then "$LS_GEN" -o "$G" -n $N -m $STEPS -c $COMMS -k $K -d "$arg"; else "$LS_GEN" -o "$G" -n $N -m $STEPS -c $COMMS -k $K; fi ||
    fail "$div: gen_traces failed"
  for fmt in text json; do
    "$LS_BIN" compare --format=$fmt "$R" > "$W/$name.rec.$fmt" 2>&1; rr=$?
    "$LS_BIN" compare --format=$fmt "$G" > "$W/$name.gen.$fmt" 2>&1; rg=$?
    [ $rr -eq $rg ] || fail "$div ($fmt): compare exits $rr on the recorder's traces, $rg on the generator's"
    want=1; [ "$div" = none ] && want=0
    [ $rr -eq $want ] || fail "$div ($fmt): compare exits $rr, expected $want: $(cat "$W/$name.rec.$fmt")"
    normalize "$R" $fmt "$W/$name.rec.$fmt" > "$W/$name.rec.$fmt.n"
    normalize "$G" $fmt "$W/$name.gen.$fmt" > "$W/$name.gen.$fmt.n"
    diff "$W/$name.rec.$fmt.n" "$W/$name.gen.$fmt.n" > "$W/$name.$fmt.diff" ||
      fail "$div ($fmt): compare differs between the recorder's and the generator's traces:
$(cat "$W/$name.$fmt.diff")"
  done
  # the digest index the generator writes is the recorder's: same blocks, records, digests
  # (communicator identities mapped as above)
  for t in 0 1 2 3; do
    rf=$(for f in "$R"/*.lstrace; do "$LS_DUMP" "$f" | grep -q "^header .* rank=$t " && echo "$f"; done) gf="$G/synth.0000$t.lstrace"
    "$LS_DUMP" --index "$rf.idx" > "$W/$name.ridx" || fail "$div: the recorder's index of rank $t"
    "$LS_DUMP" --index "$gf.idx" > "$W/$name.gidx" || fail "$div: the generator's index of rank $t"
    idmap "$R" | while read -r hex k; do echo "s/comm=$hex /comm=comm$k /"; done > "$W/ids.sed"
    idmap "$G" | while read -r hex k; do echo "s/comm=$hex /comm=comm$k /"; done > "$W/gids.sed"
    grep -q '^blk ' "$W/$name.ridx" || fail "$div: rank $t's index has no block"
    sed -f "$W/ids.sed" "$W/$name.ridx" | grep '^blk' > "$W/$name.ridx.n"
    sed -f "$W/gids.sed" "$W/$name.gidx" | grep '^blk' > "$W/$name.gidx.n"
    diff "$W/$name.ridx.n" "$W/$name.gidx.n" > /dev/null ||
      fail "$div: rank $t: the generator's index differs from the recorder's: $(diff "$W/$name.ridx.n" "$W/$name.gidx.n" | head -4)"
  done
  # the class and seq the generator was asked for are the ones compare names first
  if [ -n "$arg" ]; then
    kind=${div##*:}; seq=$(echo "$div" | cut -d: -f3); comm=$(echo "$div" | cut -d: -f2)
    case $kind in op) cls=op-mismatch;; skip) cls=skip;; *) cls=$kind-mismatch;; esac
    head -1 "$W/$name.gen.text.n" | grep -q "^divergence: $cls on comm comm$comm at seq $seq:" ||
      fail "$div: first line is not a $cls at seq $seq on comm$comm: $(head -1 "$W/$name.gen.text.n")"
  fi
  rm -rf "$R" "$G"
done
# a multi-node job's traces in one directory per node compare as one run
G="$W/nodes"
"$LS_GEN" -o "$G" -n $N -m $STEPS -c $COMMS -d 3:0:500:skip || fail "gen_traces failed"
"$LS_BIN" compare "$G" > "$W/one.text" 2>&1
mkdir "$G.node1" && mv "$G"/synth.00002.lstrace "$G"/synth.00003.lstrace "$G.node1/" || fail "cannot split $G"
"$LS_BIN" compare "$G" "$G.node1" > "$W/two.text" 2>&1 || [ $? -eq 1 ] || fail "compare of two directories failed"
grep -q "^divergence: skip on comm .* at seq 500:" "$W/two.text" || fail "two directories: no skip at seq 500: $(cat "$W/two.text")"
diff "$W/one.text" "$W/two.text" || fail "one directory and two directories per node compare differently"
"$LS_BIN" compare "$G" > "$W/half.text" 2>&1
grep -q "no trace for ranks 2,3 of 4" "$W/half.text" || fail "one node's directory alone should miss ranks 2,3: $(cat "$W/half.text")"
rm -rf "$W"
echo ok
