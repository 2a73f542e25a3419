# bench/gpu_hostcost_ab.c's CPU path (stand-in NCCL, fake driver): every phase ran and
# wrote its rows; preloaded, phase A0 ran before the recorder started and only phase B's
# calls are recorded (A0 and A went to NCCL's own symbols).
. "$(dirname "$0")/lib.sh"
R=2 N=50
rows() { # FILE LABEL MODE PHASES: a pooled row per phase x metric with n = R*N, plus R per round
  for ph in $4; do
    for m in allreduce_sync group_host; do
      awk -F, -v l="$2" -v mo="$3" -v p="$ph" -v m="$m" -v n=$((R * N)) \
        '$1 == l && $2 == mo && $3 == p && $4 == m && $5 == -1 && $6 == n && $7 > 0 && $8 >= $7 { k++ }
         END { exit k == 1 ? 0 : 1 }' "$1" || fail "$2/$3: no pooled $ph $m row with n=$((R * N)): $(cat "$1")"
      k=$(awk -F, -v l="$2" -v p="$ph" -v m="$m" '$1 == l && $3 == p && $4 == m && $5 >= 0 && $6 == '$N' { k++ } END { print k + 0 }' "$1")
      [ "$k" -eq "$R" ] || fail "$2/$3: expected $R per-round $ph $m rows, got $k"
    done
  done
}
"$LS_AB" "$T/ab.csv" plain ab $R $N > "$T/plain.out" || fail "plain run failed"
head -1 "$T/ab.csv" | grep -qx 'label,mode,phase,metric,round,n,median_ns,p95_ns' || fail "header: $(head -1 "$T/ab.csv")"
grep -qx 'interposed: no' "$T/plain.out" || fail "plain: $(cat "$T/plain.out")"
rows "$T/ab.csv" plain ab "A0 A B"
LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$LS_AB" "$T/ab.csv" lockstep ab $R $N > "$T/ls.out" ||
  fail "preloaded run failed"
grep -qx 'interposed: yes' "$T/ls.out" || fail "preloaded: $(cat "$T/ls.out")"
grep -q '^device: none' "$T/ls.out" || fail "the fake driver has no cuInit: $(cat "$T/ls.out")"
# the recorder's thread did not exist during A0
grep -Eq '^threads: ([0-9]+) before A0, \1 after$' "$T/ls.out" || fail "recorder started before B: $(cat "$T/ls.out")"
rows "$T/ab.csv" lockstep ab "A0 A B"
"$LS_DUMP" "$(one_trace)" > "$T/dump" || fail dump
ar=$(grep -c '^rec .* api=ncclAllReduce ' "$T/dump")
gs=$(grep -c '^rec .* api=ncclGroupStart ' "$T/dump")
ge=$(grep -c '^rec .* api=ncclGroupEnd ' "$T/dump")
# phase B: R*N all-reduces alone and R*N inside groups
[ "$ar" -eq $((2 * R * N)) ] && [ "$gs" -eq $((R * N)) ] && [ "$ge" -eq $((R * N)) ] ||
  fail "expected $((2 * R * N)) all-reduce and $((R * N)) group records (phase B only), got $ar/$gs/$ge"
for mode in thread map pin; do
  "$LS_AB" "$T/ab.csv" "v-$mode" $mode $R $N > "$T/$mode.out" || fail "$mode run failed"
  rows "$T/ab.csv" "v-$mode" $mode "A B"
  grep -q "^v-$mode,$mode,A0," "$T/ab.csv" && fail "$mode: has no phase A0"
done
"$LS_AB" "$T/x.csv" x nosuch 2> "$T/err"; [ $? -eq 2 ] || fail "unknown mode: expected exit 2"
grep -q "unknown mode 'nosuch'" "$T/err" || fail "unknown mode: $(cat "$T/err")"
echo ok
