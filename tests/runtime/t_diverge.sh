# End to end on CPU: two rank processes that disagree at seq 1, recorded by
# liblockstep and read by `lockstep compare --format=json`, which must name the class,
# the seq and both ranks (expectations from the shared divergence vocabulary).
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || { echo "no python3: skipped"; exit 77; }
check() { # how class
  d="$T/$1"
  for r in 0 1; do
    RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$d" LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" \
      "$LS_PROG" diverge "$1" || fail "$1: rank $r failed"
  done
  "$LS_BIN" compare --format=json "$d" > "$d.json"
  [ $? -eq 1 ] || fail "$1: compare should exit 1 (divergent)"
  python3 - "$d.json" "$2" <<'P' || fail "$1: $(cat "$d.json")"
import json, sys
d = json.load(open(sys.argv[1]))
v = d["divergences"][0]
ok = d["status"] == "divergent" and v["class"] in sys.argv[2].split("|") and v["seq"] in (1, 2) \
     and sorted(v["ranks"]) == [0, 1]
sys.exit(0 if ok else 1)
P
}
check op op-mismatch
check count count-mismatch
check dtype dtype-mismatch
check redop redop-mismatch
check root root-mismatch
check skip skip
check extra "extra-call|skip"
# and the consistent twin
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCKSTEP_TRACE_DIR="$T/same" LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" \
    "$LS_PROG" diverge none || fail "consistent run failed"
done
"$LS_BIN" compare "$T/same" > /dev/null || fail "consistent twin reported divergent"
echo ok
