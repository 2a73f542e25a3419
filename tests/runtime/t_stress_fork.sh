# Stress item 2: fork after init, while three threads are inside the recorder and a
# fourth registers communicators. Each child issues collectives on an inherited and on
# a new communicator and ends with _exit or exit; the parent goes on. Documented
# behavior (README "Runtime"): a child records into its own trace (<host>.<pid>), never
# into the parent's; inherited communicators keep their identity and continue the
# parent's numbering. Also: fork during another thread's first NCCL call (the recorder
# initializing) must not leave the child's first call deadlocked (bug fixed here).
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || { echo "no python3: skipped"; exit 77; }
# TSan cannot model threads started in a child of a multithreaded process unless told;
# its 1 s sleep at each exit would make the loop below take minutes.
RUNS=40
if [ -n "${TSAN_OPTIONS:-}" ]; then
  export TSAN_OPTIONS="$TSAN_OPTIONS:die_after_fork=0:atexit_sleep_ms=0"
  RUNS=20
fi
K=10
export LS_STANDIN_DELAY_US=50 # calls take time: threads are inside them at fork time
LD_LIBRARY_PATH="$LS_FAKECUDA" LD_PRELOAD="$LS_LIB" timeout 90 "$LS_STRESS" fork $K > "$T/out" ||
  fail "fork run failed ($?): $(cat "$T/out")"
[ "$(grep -c '^child ' "$T/out")" -eq $K ] || fail "expected $K children: $(cat "$T/out")"
for f in "$LOCKSTEP_TRACE_DIR"/*.lstrace; do
  "$LS_DUMP" "$f" > "$f.dump" || fail "trace $f does not parse"
done
[ "$(ls "$LOCKSTEP_TRACE_DIR"/*.lstrace | wc -l)" -eq $((K + 1)) ] || fail "expected $((K + 1)) traces"
python3 - "$T/out" "$LOCKSTEP_TRACE_DIR" <<'P' || fail "fork traces inconsistent"
import glob, os, sys
def recs(path):
    hdr, out = None, []
    for line in open(path):
        f = line.split()
        kv = dict(x.split("=", 1) for x in f[1:] if "=" in x)
        if f[0] == "header":
            hdr = kv
        elif f[0] == "rec":
            out.append(kv)
    return hdr, out
def die(msg):
    print("t_stress_fork:", msg, file=sys.stderr)
    sys.exit(1)
children = [l.split() for l in open(sys.argv[1]) if l.startswith("child ")]
dumps = {recs(p)[0]["pid"]: recs(p) for p in glob.glob(os.path.join(sys.argv[2], "*.dump"))}
parent_comm = None
for _, k, _, pid, _, code, _, first in children:
    k, first = int(k), int(first)
    if pid not in dumps:
        die("child %d (pid %s) has no trace of its own" % (k, pid))
    hdr, rs = dumps.pop(pid)
    if len(rs) != 15 or any(r["state"] != "2" or r["rc"] != "0" for r in rs):
        die("child %d: expected 15 returned, successful records, got %d" % (k, len(rs)))
    clean = "clean" in hdr["hflags"]
    if clean != (k % 2 == 1):
        die("child %d: clean-exit flag %s after %s" % (k, clean, "exit" if k % 2 else "_exit"))
    inh = [r for r in rs if r["api"] == "ncclAllReduce" and 100 <= int(r["count"]) < 105]
    own = [r for r in rs if r["api"] == "ncclAllReduce" and 200 <= int(r["count"]) < 205]
    if [int(r["seq"]) for r in inh] != list(range(first, first + 5)):
        die("child %d: inherited comm numbered %s, expected from %d" % (k, [r["seq"] for r in inh], first))
    if [int(r["seq"]) for r in own] != list(range(5)) or len({r["comm"] for r in own}) != 1:
        die("child %d: its own comm numbered %s" % (k, [r["seq"] for r in own]))
    if parent_comm not in (None, inh[0]["comm"]):
        die("children disagree on the inherited comm's identity")
    parent_comm = inh[0]["comm"]
if len(dumps) != 1:
    die("expected the parent's trace left, got %d" % len(dumps))
hdr, rs = dumps.popitem()[1]
mine = [r for r in rs if r["comm"] == parent_comm and r["seq"] != "-"]
if [(int(r["seq"]), int(r["count"])) for r in mine] != [(i, i) for i in range(len(children))]:
    die("parent's comm: %s" % [(r["seq"], r["count"]) for r in mine])
by = {}
for r in rs:
    if r["seq"] != "-" and r["state"] != "0":
        by.setdefault(r["comm"], []).append(int(r["seq"]))
for c, seqs in by.items():
    if sorted(seqs) != list(range(len(seqs))):
        die("parent comm %s: seq has holes or duplicates" % c)
P
# Fork during the first call's initialization, many times (it hung 1 run in 4 before).
export LOCKSTEP_TRACE_CAPACITY=1024
i=0
while [ $i -lt $RUNS ]; do
  LOCKSTEP_TRACE_DIR="$T/init$i" LD_PRELOAD="$LS_LIB" timeout 30 "$LS_STRESS" forkinit ||
    fail "fork during initialization: run $i failed"
  i=$((i + 1))
done
echo ok
