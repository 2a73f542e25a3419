# libnccl.so.2 reached only through a library dlopen'ed RTLD_LOCAL (PyTorch under
# Python): the wrappers still find the real functions and record the calls.
. "$(dirname "$0")/lib.sh"
LD_PRELOAD="$LS_LIB" "$LS_DLMAIN" "$LS_DLUSER" 2> "$T/err"
code=$?
[ $code -eq 0 ] || fail "program returned $code: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "stderr: $(cat "$T/err")"
f=$(one_trace)
"$LS_DUMP" "$f" > "$T/dump" || fail dump
grep -q 'api=ncclGroupEnd .* rc=5 ' "$T/dump" || fail "group end not recorded"
grep -q 'api=ncclAllReduce .* seq=0 ' "$T/dump" || fail "allreduce not recorded"
echo ok
