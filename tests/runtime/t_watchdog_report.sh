# Watchdog, policy report: one exact line within bounded time; the program goes on
# and exits normally.
policy=report
. "$(dirname "$0")/wd_common.sh"
[ "$code" -eq 0 ] || fail "report must not change the exit code (got $code)"
[ "$elapsed" -le 12 ] || fail "took $elapsed s"
echo ok
