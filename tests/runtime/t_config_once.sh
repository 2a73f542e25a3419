# liblockstep reads its configuration once: every LOCKSTEP_* variable of runtime/README.md's
# environment table (but LOCKSTEP_LIB, which only `lockstep run` reads) is asked for exactly
# once by a process that records, through device tracking, the watchdog, the digest index
# and the online check; none is read that the table does not list (but LOCKSTEP_TEST_*
# hooks, read once all the same); a disabled process reads only
# LOCKSTEP_DISABLE. A variable read twice, or one a subsystem stopped reading, fails here.
. "$(dirname "$0")/lib.sh"
[ -n "${LS_GETENV_SHIM:-}" ] || fail "LS_GETENV_SHIM not set"
README="$(dirname "$0")/../../runtime/README.md"
want=$(sed -n 's/^| `\(LOCKSTEP_[A-Z_]*\)` |.*/\1/p' "$README" | grep -v '^LOCKSTEP_LIB$' | sort)
[ "$(echo "$want" | wc -l)" -ge 15 ] || fail "README's environment table not found: $want"
echo "$want" > "$T/want"
export LS_GETENV_LOG="$T/reads" LD_LIBRARY_PATH="$LS_FAKECUDA" LOCKSTEP_ONLINE_DIR="$T/ch"
mkdir -p -m 700 "$T/ch"
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LS_GETENV_LOG="$T/reads$r" LD_PRELOAD="$LS_GETENV_SHIM $LS_LIB" \
    "$LS_PROG" threads 4 50 2> "$T/err$r" &
done
wait
for r in 0 1; do
  [ ! -s "$T/err$r" ] || fail "rank $r printed: $(cat "$T/err$r")"
  [ -s "$T/reads$r" ] || fail "rank $r: nothing read (is the shim ahead of liblockstep?)"
  twice=$(sort "$T/reads$r" | uniq -d)
  [ -z "$twice" ] || fail "rank $r read more than once: $twice"
  sort -u "$T/reads$r" > "$T/got$r"
  missing=$(comm -23 "$T/want" "$T/got$r")
  [ -z "$missing" ] || fail "rank $r never read: $missing"
  extra=$(comm -13 "$T/want" "$T/got$r" | grep -v '^LOCKSTEP_TEST_')
  [ -z "$extra" ] || fail "rank $r read variables the README does not list: $extra"
done
LOCKSTEP_DISABLE=1 LS_GETENV_LOG="$T/off" LD_PRELOAD="$LS_GETENV_SHIM $LS_LIB" "$LS_PROG" basic ||
  fail "disabled run exited $?"
[ "$(cat "$T/off")" = LOCKSTEP_DISABLE ] || fail "disabled process read: $(cat "$T/off")"
echo ok
