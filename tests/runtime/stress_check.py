#!/usr/bin/env python3
"""stress_check.py — matches a trace (as printed by ls_trace_dump, or by
`lockstep trace export --format=json` when DUMP ends in .json) with what
stress_nccl.c says it issued (LS_STRESS_LOG): every record intact, the sequenced calls
of each communicator numbered 0..n-1 with no hole or duplicate, each communicator's
calls exactly those issued on it (api, count, result) in issue order, one thread per
trace tid, and as many records as calls. Exit 1 with the first difference.
usage: stress_check.py DUMP LOG [--aborted]   (--aborted: log comm 0 was aborted once)"""
import sys
from collections import defaultdict


def fail(msg):
    print("stress_check: " + msg, file=sys.stderr)
    sys.exit(1)


def parse_dump(path):
    recs = []
    for line in open(path):
        if not line.startswith("rec "):
            continue
        f = line.split()
        kv = dict(x.split("=", 1) for x in f[2:])
        kv["index"] = int(f[1])
        recs.append(kv)
    return recs


RESULTS = ["ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
           "ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress"]


def parse_export(path):
    """The export's records in the dump's vocabulary (one trace expected)."""
    import json
    doc = json.load(open(path))
    if len(doc["traces"]) != 1:
        fail("%s: expected one trace, got %d" % (path, len(doc["traces"])))
    states = {"free": "0", "entered": "1", "returned": "2"}
    recs = []
    for r in doc["traces"][0]["records"]:
        rc = r["rc"]
        recs.append({"index": r["index"], "state": states.get(r["state"], r["state"]), "api": r["api"],
                     "comm": r["comm"], "seq": "-" if r["seq"] is None else str(r["seq"]),
                     "count": str(r["count"]), "rc": str(RESULTS.index(rc) if rc in RESULTS else rc),
                     "tid": str(r["tid"]), "enter": str(r["t_enter_ns"]), "exit": str(r["t_exit_ns"])})
    return recs


def parse_log(path):
    total, calls = None, defaultdict(list)
    for line in open(path):
        f = line.split()
        if f[0] == "records":
            total = int(f[1])
        elif f[0] == "call":
            c, k, api, count, rc, thread = int(f[1]), int(f[2]), f[3], int(f[4]), int(f[5]), int(f[6])
            if k != len(calls[c]):
                fail("log out of order at comm %d entry %d" % (c, k))
            calls[c].append((api, count, rc, thread))
    if total is None:
        fail("log has no records line")
    return total, calls


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    recs = (parse_export if sys.argv[1].endswith(".json") else parse_dump)(sys.argv[1])
    total, calls = parse_log(sys.argv[2])
    aborted = "--aborted" in sys.argv[3:]
    bad = [r for r in recs if r["state"] != "2"]
    if bad:
        fail("%d records not returned, first: %s" % (len(bad), bad[0]))
    if len(recs) != total:
        fail("trace has %d records, the program made %d calls" % (len(recs), total))
    per_comm = defaultdict(list)
    for r in recs:
        if r["seq"] != "-":
            per_comm[r["comm"]].append(r)
    by_first = {}
    for comm, rs in per_comm.items():
        rs.sort(key=lambda r: int(r["seq"]))
        seqs = [int(r["seq"]) for r in rs]
        if seqs != list(range(len(rs))):
            dup = len(seqs) - len(set(seqs))
            fail("comm %s: seq not 0..%d (%d duplicates, max %d)" % (comm, len(rs) - 1, dup, max(seqs)))
        # a record's seq order must also be its thread's issue order
        last = {}
        for r in rs:
            if int(r["index"]) < last.get(r["tid"], -1):
                fail("comm %s: thread %s's seq %s was recorded before its previous call" % (comm, r["tid"], r["seq"]))
            last[r["tid"]] = int(r["index"])
        by_first[(rs[0]["api"], int(rs[0]["count"]))] = comm
    logged = {c: v for c, v in calls.items() if v}
    if len(logged) != len(per_comm):
        fail("%d communicators with calls in the log, %d in the trace" % (len(logged), len(per_comm)))
    tid_of, thread_of = {}, {}
    comm_of = {}
    for c, v in sorted(logged.items()):
        comm = by_first.get((v[0][0], v[0][1]))
        if comm is None:
            fail("log comm %d: no trace communicator starts with %s count=%d" % (c, v[0][0], v[0][1]))
        comm_of[c] = comm
        rs = per_comm[comm]
        if len(rs) != len(v):
            fail("log comm %d: %d calls issued, %d recorded" % (c, len(v), len(rs)))
        for k, ((api, count, rc, thread), r) in enumerate(zip(v, rs)):
            if (api, count, rc) != (r["api"], int(r["count"]), int(r["rc"])):
                fail("log comm %d seq %d: issued %s count=%d rc=%d, recorded %s count=%s rc=%s"
                     % (c, k, api, count, rc, r["api"], r["count"], r["rc"]))
            if tid_of.setdefault(thread, r["tid"]) != r["tid"] or thread_of.setdefault(r["tid"], thread) != thread:
                fail("log comm %d seq %d: thread %d recorded as tid %s (seen as %s before)"
                     % (c, k, thread, r["tid"], tid_of[thread]))
    if aborted:
        ab = [r for r in recs if r["api"] == "ncclCommAbort"]
        if len(ab) != 1 or ab[0]["comm"] != comm_of[0] or ab[0]["rc"] != "0":
            fail("expected one ncclCommAbort on the aborted comm with rc 0, got %s" % ab)
        after = [r for r in per_comm[comm_of[0]] if int(r["index"]) > ab[0]["index"]]
        if not after or any(int(r["rc"]) == 0 and int(r["enter"]) > int(ab[0]["exit"]) for r in after):
            fail("calls entered after the abort returned must fail")
    print("stress_check: %d records, %d communicators, %d threads match" % (len(recs), len(per_comm), len(tid_of)))


try:
    main()
except Exception as e:  # a malformed input: one first line that names it (CI shows little of a failure)
    import traceback
    tb = traceback.extract_tb(e.__traceback__)[-1]
    fail("cannot check %s: %s: %s (%s:%d in %s: %s)" % (" ".join(sys.argv[1:3]), type(e).__name__, str(e)[:300],
                                                        tb.filename.rsplit("/", 1)[-1], tb.lineno, tb.name, tb.line))
