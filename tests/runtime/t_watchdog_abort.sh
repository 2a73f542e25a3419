# Watchdog, policy abort: ncclCommAbort reaches the (stand-in) library; the program
# notices and exits 3.
policy=abort
. "$(dirname "$0")/wd_common.sh"
[ "$code" -eq 3 ] || fail "expected the program to see the abort (exit 3), got $code"
[ "$elapsed" -le 5 ] || fail "abort took $elapsed s"
echo ok
