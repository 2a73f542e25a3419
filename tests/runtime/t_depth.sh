# The group depth recorded at entry, the return code and the outermost-end flag match
# NCCL's thread-local semantics for the `rc` scenario (expected list written from
# nccl.h's group semantics, not copied from output).
. "$(dirname "$0")/lib.sh"
LD_PRELOAD="$LS_LIB" "$LS_PROG" rc >/dev/null || fail "program failed"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail "dump failed"
# api rc depth outer-flag, in call order (polls collapsed)
grep '^rec' "$T/dump" | awk '{
  api=""; rc=""; d=""; fl="";
  for (i = 1; i <= NF; i++) { split($i, kv, "=");
    if (kv[1]=="api") api=kv[2]; if (kv[1]=="rc") rc=kv[2]; if (kv[1]=="depth") d=kv[2]; if (kv[1]=="fl") fl=kv[2] }
  outer = (fl ~ /outer/ ? "outer" : "-");
  line = api " " rc " " d " " outer;
  if (line != last) print line; last = line }' > "$T/got"
cat > "$T/want" <<'W'
ncclCommInitRank 0 0 -
ncclGroupEnd 5 0 -
ncclGroupStart 0 0 -
ncclBroadcast 4 1 -
ncclGroupEnd 4 1 outer
ncclGroupStart 0 0 -
ncclAllReduce 0 1 -
ncclGroupStart 0 1 -
ncclSend 0 2 -
ncclGroupEnd 0 2 -
ncclGroupEnd 0 1 outer
ncclAllReduce 4 0 -
ncclCommCount 4 0 -
ncclCommGetAsyncError 4 0 -
ncclCommInitRank 4 0 -
ncclCommSplit 0 0 -
ncclGroupStart 0 0 -
ncclAllReduce 0 1 -
ncclGroupSimulateEnd 0 1 outer
ncclCommInitRankConfig 7 0 -
ncclCommGetAsyncError 0 0 -
ncclAllReduce 0 0 -
ncclCommFinalize 7 0 -
ncclCommGetAsyncError 0 0 -
ncclCommDestroy 0 0 -
ncclCommAbort 0 0 -
W
diff "$T/want" "$T/got" >&2 || fail "recorded depth/rc/outer flags differ from NCCL's semantics"
# allreduce_null_comm is the second ungrouped ncclAllReduce with rc 4: check it is kept
[ "$(grep -c 'api=ncclAllReduce .* rc=4 ' "$T/dump")" -eq 2 ] || fail "ungrouped errors not both recorded"
# the async state of the first poll of the non-blocking comm is ncclInProgress (7)
grep 'api=ncclCommGetAsyncError' "$T/dump" | grep ' rc=0 ' | head -1 | grep -q ' aux0=7 ' ||
  fail "async state not recorded in aux0"
echo ok
