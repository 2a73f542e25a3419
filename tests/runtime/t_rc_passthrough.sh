# Return codes pass through unchanged for every class: success, ncclInvalidUsage (end
# at depth 0), ncclInvalidArgument (inside a group and again from the outer end;
# ungrouped), ncclInProgress (non-blocking init/finalize) — with and without a device.
. "$(dirname "$0")/lib.sh"
plain=$("$LS_PROG" rc 2>&1) || fail "plain run exited $?: $plain"
echo "$plain" | grep -q '^rc groupend_depth0 5$' || fail "stand-in does not mimic NCCL: $plain"
pre=$(LD_PRELOAD="$LS_LIB" "$LS_PROG" rc 2>&1) || fail "preloaded run exited $?: $pre"
[ "$plain" = "$pre" ] || fail "results differ under the recorder"
dev=$(LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" "$LS_PROG" rc 2>&1) ||
  fail "preloaded run with a device exited $?: $dev"
[ "$plain" = "$dev" ] || fail "results differ under the recorder with a device"
[ "$(ls "$LOCKSTEP_TRACE_DIR" | grep -c '\.lstrace$')" -eq 2 ] || fail "expected two traces"
echo ok
