# Watchdog, policy exit: the process ends with lockstep's distinct code 86.
policy=exit
. "$(dirname "$0")/wd_common.sh"
[ "$code" -eq 86 ] || fail "expected exit code 86, got $code"
[ "$elapsed" -le 5 ] || fail "exit took $elapsed s"
echo ok
