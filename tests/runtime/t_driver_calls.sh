# The device bookkeeping's driver calls per interposed call stay where they are, counted
# by the fake driver: with an event per call, one capture query and one record per
# ungrouped collective or outermost group end (none for the group start or the calls
# inside), or nothing for a call that goes unwatched (its stream's ring full); events
# and context queries only as events are made, never per call; deferred
# (LOCKSTEP_DEFER_US), at most one capture query per cover and a record per bound.
# A driver call per call that came back (a context or stream query, an event made or a
# capture query for every call) fails here.
. "$(dirname "$0")/lib.sh"
cnt() { awk -v k="$1" '$1 == k { n = $2 } END { print n + 0 }' "$2"; }
stat() { sed -n "s/.* \([0-9]*\) $1.*/\1/p" "$2"; }
# run NAME COVERS ARGS...: the bench program with the fake driver; COVERS: the covers it
# asks for (ungrouped calls, outermost group ends)
run() {
  name=$1 covers=$2
  shift 2
  LOCKSTEP_DEVICE_STATS=1 LS_FAKE_CUDA_COUNT="$T/$name" LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" \
    "$LS_BENCH" "$@" > /dev/null 2> "$T/$name.err" || fail "$name: $*: $(cat "$T/$name.err")"
  rec=$(cnt cuEventRecord "$T/$name") cap=$(cnt cuStreamIsCapturing "$T/$name")
  made=$(cnt cuEventCreate "$T/$name") cur=$(cnt cuCtxGetCurrent "$T/$name")
  sctx=$(cnt cuStreamGetCtx "$T/$name") setc=$(cnt cuCtxSetCurrent "$T/$name") qry=$(cnt cuEventQuery "$T/$name")
  nrec=$(stat "events recorded" "$T/$name.err") nfull=$(stat "unwatched" "$T/$name.err")
  [ -n "$nrec" ] && [ -n "$nfull" ] || fail "$name: no device stats: $(cat "$T/$name.err")"
  [ "$rec" -ge 1 ] || fail "$name: no event recorded"
  # (the poller sets its context once per poll that queries)
  [ "$made" -le "$rec" ] && [ "$cur" -le $((made + 1)) ] && [ "$sctx" -le 1 ] && [ "$setc" -le $((qry + 1)) ] ||
    fail "$name: driver calls beyond the events made: $(tr '\n' ' ' < "$T/$name")"
}
# an event per cover: every cover records (after a capture query) or goes unwatched
for m in "ungrouped $((2000 + 10000)) 2000 250" "group 2000 group 2000 250"; do
  # shellcheck disable=SC2086
  set -- $m
  name=$1 covers=$2
  shift 2
  run "$name" "$covers" "$@"
  [ "$rec" -eq "$nrec" ] && [ $((nrec + nfull)) -eq "$covers" ] ||
    fail "$name: $rec records, $nrec events + $nfull unwatched for $covers covers"
  [ "$cap" -eq "$rec" ] || fail "$name: $cap capture queries for $rec records"
done
# deferred: a capture query per cover at most, far fewer records
export LOCKSTEP_DEFER_US=1000
for m in "ungrouped_defer $((4000 + 10000)) 4000 500" "group_defer 4000 group 4000 500"; do
  # shellcheck disable=SC2086
  set -- $m
  name=$1 covers=$2
  shift 2
  run "$name" "$covers" "$@"
  [ "$cap" -le "$covers" ] || fail "$name: $cap capture queries for $covers covers"
  [ "$rec" -le $((covers / 10)) ] || fail "$name: $rec records for $covers covers"
done
echo ok
